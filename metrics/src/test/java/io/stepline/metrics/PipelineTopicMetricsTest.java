package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.stepline.events.Severity;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

class PipelineTopicMetricsTest {
    private static byte[] verdict(long step, Verdict v) {
        return EventSerdes.VERDICT.encode(StepVerdict.newBuilder().setInstanceId("sim-i00").setStepId(step).setStartUnixNano(1).setEndUnixNano(2)
                .setLatencyNs(1).setExpectedNs(1).setBoundNs(2).setDeviationRatio(1).setVerdict(v).setSeverity(Severity.NONE)
                .setModelKind("robust").setModelVersion(1).setProcessedTokens(1).build());
    }

    /** Issue 19: a record of stepline.verdicts carries the verdicts on one record of steps; each is counted. */
    @Test
    void everyVerdictOfARecordIsCounted() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PipelineTopicMetrics tap = new PipelineTopicMetrics(registry, "127.0.0.1:1", "unused", true);
        tap.accept(Topics.VERDICTS.topicName(), BatchedRecords.VERDICTS.join("sim-i00",
                List.of(verdict(1, Verdict.NORMAL), verdict(2, Verdict.OUTLIER), verdict(3, Verdict.NORMAL))));
        tap.accept(Topics.VERDICTS.topicName(), verdict(4, Verdict.NORMAL)); // a single verdict, as written before batches

        assertThat(registry.get("stepline.verdicts").tag("verdict", "NORMAL").counter().count()).isEqualTo(3.0);
        assertThat(registry.get("stepline.verdicts").tag("verdict", "OUTLIER").counter().count()).isEqualTo(1.0);
    }
}
