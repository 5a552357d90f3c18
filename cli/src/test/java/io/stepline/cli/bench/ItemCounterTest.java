package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.Severity;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;

class ItemCounterTest {
    /** The bench counts a stage's output in steps and verdicts, whatever records carry them. */
    @Test
    void aRecordCountsTheStepsOrVerdictsItCarries() {
        byte[] v = EventSerdes.VERDICT.encode(StepVerdict.newBuilder().setInstanceId("i").setStepId(1).setStartUnixNano(1).setEndUnixNano(2)
                .setLatencyNs(1).setExpectedNs(1).setBoundNs(2).setDeviationRatio(1).setVerdict(Verdict.NORMAL).setSeverity(Severity.NONE)
                .setModelKind("robust").setModelVersion(1).setProcessedTokens(1).build());
        assertThat(ItemCounter.items(BatchedRecords.VERDICTS.join("i", Collections.nCopies(64, v)))).isEqualTo(64);
        assertThat(ItemCounter.items(BatchedRecords.STEPS.join("i", Collections.nCopies(3, new byte[] {1})))).isEqualTo(3);
        assertThat(ItemCounter.items(BatchedRecords.STEPS.join("i", List.of()))).isZero();
        assertThat(ItemCounter.items(v)).isEqualTo(1);
        assertThat(ItemCounter.items(new byte[] {10, 2, 3})).isEqualTo(1);
    }
}
