package io.stepline.evaluation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.events.Severity;
import io.stepline.events.StepLabel;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

class DetectionEvaluatorTest {
    private static final long MS = 1_000_000L;

    private static StepVerdict verdict(long step, Verdict v) {
        return StepVerdict.newBuilder().setInstanceId("i").setStepId(step).setStartUnixNano(step * 10 * MS)
                .setEndUnixNano(step * 10 * MS + 10 * MS).setLatencyNs(10 * MS).setExpectedNs(10e6).setBoundNs(15e6)
                .setDeviationRatio(v == Verdict.OUTLIER ? 2 : 1).setVerdict(v).setSeverity(Severity.NONE).setModelKind("m")
                .setModelVersion(1).setProcessedTokens(1).build();
    }

    @Test
    void flaggedStepsBecomeIncidentsAndDriftAlarmsAreCounted() {
        List<StepLabel> labels = new ArrayList<>();
        DetectionEvaluator.Run run = DetectionEvaluator.run("m");
        for (long s = 0; s < 400; s++) {
            boolean faulted = s >= 200 && s < 204;
            run.judged(verdict(s, faulted || s == 350 ? Verdict.OUTLIER : Verdict.NORMAL));
            labels.add(StepLabel.newBuilder().setInstanceId("i").setStepId(s).setStartUnixNano(s * 10 * MS)
                    .setLatencyNs(faulted ? 20 * MS : 10 * MS).setHealthyLatencyNs(10 * MS).setFaultId(faulted ? "f1" : null)
                    .setFaultType(faulted ? FaultType.HOST_STALL : FaultType.NONE).setMagnitude(faulted ? 2.0 : null).build());
        }
        run.drift(verdict(399, Verdict.NORMAL), 1.3);
        List<FaultEpisode> episodes = List.of(FaultEpisode.newBuilder().setFaultId("f1").setFaultType(FaultType.HOST_STALL)
                .setInstanceId("i").setStartUnixNano(2000 * MS).setEndUnixNano(2040 * MS).setMagnitude(2).build());

        DetectionEvaluator.Result r = run.finish(labels, episodes, 1234);

        assertThat(r.model()).isEqualTo("m");
        assertThat(r.driftAlarms()).isEqualTo(1);
        assertThat(r.stateBytesPerInstance()).isEqualTo(1234);
        assertThat(r.score().steps).isEqualTo(400);
        assertThat(r.score().stepRecall()).isEqualTo(1.0);
        assertThat(r.score().episodesFound).isEqualTo(1);
        // the four flagged steps are one run, step 350 (still open at the end) a second, the drift alarm a third
        assertThat(r.score().incidents).isEqualTo(3);
        assertThat(r.score().trueIncidents).isEqualTo(1);
        assertThat(DetectionEvaluator.table(List.of(r))).contains("fault episodes detected", "1/1");
    }
}
