package io.stepline.cli.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.Severity;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;

/** The crash loop's comparison: what counts as the same output, and each way a run can differ from the clean one. */
class CommittedRecordsTest {
    private static byte[] verdict(long step, Verdict v, long producedNanos) {
        return EventSerdes.VERDICT.encode(new StepVerdict("i1", step, step * 10, step * 10 + 9, 9L, 8.0, 12.0, 1.1, v, Severity.NONE, "robust", 3L,
                100L, producedNanos));
    }

    private static CommittedRecords verdicts(byte[]... values) {
        return CommittedRecords.of(OutputTopic.VERDICTS, List.of(values));
    }

    @Test
    void theSameVerdictsProducedAtAnotherTimeAreTheSameOutput() {
        CommittedRecords clean = verdicts(verdict(1, Verdict.NORMAL, 111), verdict(2, Verdict.OUTLIER, 112));
        CommittedRecords crashed = verdicts(verdict(2, Verdict.OUTLIER, 999), verdict(1, Verdict.NORMAL, 998));
        CommittedRecords.Difference d = crashed.against(clean);
        assertThat(d.none()).isTrue();
        assertThat(d.describe()).endsWith("identical");
    }

    @Test
    void missingExtraRepeatedAndChangedRecordsAreEachNamed() {
        CommittedRecords clean = verdicts(verdict(1, Verdict.NORMAL, 0), verdict(2, Verdict.OUTLIER, 0), verdict(3, Verdict.NORMAL, 0));
        CommittedRecords crashed = verdicts(verdict(1, Verdict.NORMAL, 0), verdict(1, Verdict.NORMAL, 0), verdict(2, Verdict.NORMAL, 0),
                verdict(4, Verdict.NORMAL, 0));
        CommittedRecords.Difference d = crashed.against(clean);
        assertThat(d.none()).isFalse();
        assertThat(d.missing()).containsExactly("i1/3");
        assertThat(d.extra()).containsExactly("i1/4");
        assertThat(d.repeated()).containsExactly("i1/1");
        assertThat(d.changed()).containsExactly("i1/2");
        assertThat(d.describe()).contains("1 missing [i1/3]").contains("1 repeated [i1/1]");
    }

    /** Issue 19: a crash may cut the verdicts of a run into other records; each verdict is compared alone. */
    @Test
    void verdictsCarriedInOtherRecordsAreTheSameOutput() {
        CommittedRecords clean = verdicts(BatchedRecords.VERDICTS.join("i1", List.of(verdict(1, Verdict.NORMAL, 1), verdict(2, Verdict.OUTLIER, 1),
                verdict(3, Verdict.NORMAL, 1))));
        CommittedRecords crashed = verdicts(BatchedRecords.VERDICTS.join("i1", List.of(verdict(1, Verdict.NORMAL, 5))),
                BatchedRecords.VERDICTS.join("i1", List.of(verdict(2, Verdict.OUTLIER, 6), verdict(3, Verdict.NORMAL, 6))));
        assertThat(clean.records()).isEqualTo(3);
        assertThat(crashed.against(clean).none()).isTrue();

        CommittedRecords repeated = verdicts(BatchedRecords.VERDICTS.join("i1", List.of(verdict(1, Verdict.NORMAL, 5), verdict(2, Verdict.OUTLIER, 5))),
                BatchedRecords.VERDICTS.join("i1", List.of(verdict(2, Verdict.OUTLIER, 6), verdict(3, Verdict.NORMAL, 6))));
        assertThat(repeated.against(clean).repeated()).containsExactly("i1/2");
    }

    @Test
    void aDuplicateAloneIsADifference() {
        CommittedRecords clean = verdicts(verdict(1, Verdict.NORMAL, 0));
        CommittedRecords crashed = verdicts(verdict(1, Verdict.NORMAL, 0), verdict(1, Verdict.NORMAL, 0));
        assertThat(crashed.against(clean).none()).isFalse();
        assertThat(crashed.against(clean).repeated()).containsExactly("i1/1");
    }
}
