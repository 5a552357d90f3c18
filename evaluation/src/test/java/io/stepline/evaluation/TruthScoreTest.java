package io.stepline.evaluation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.Severity;
import io.stepline.events.StepLabel;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

class TruthScoreTest {
    private static final long MS = 1_000_000L;

    private static StepVerdict verdict(long step, Verdict v) {
        return StepVerdict.newBuilder().setInstanceId("i").setStepId(step).setStartUnixNano(step * 10 * MS)
                .setEndUnixNano(step * 10 * MS + 10 * MS).setLatencyNs(10 * MS).setExpectedNs(10e6).setBoundNs(15e6)
                .setDeviationRatio(1).setVerdict(v).setSeverity(Severity.NONE).setModelKind("m").setModelVersion(1)
                .setProcessedTokens(1).build();
    }

    private static StepLabel label(long step, String fault, double slowdown) {
        return StepLabel.newBuilder().setInstanceId("i").setStepId(step).setStartUnixNano(step * 10 * MS)
                .setLatencyNs((long) (10 * MS * slowdown)).setHealthyLatencyNs(10 * MS).setFaultId(fault)
                .setFaultType(fault == null ? FaultType.NONE : FaultType.HOST_STALL).setMagnitude(fault == null ? null : slowdown).build();
    }

    @Test
    void computesRecallFalsePositivesEpisodesAndPrecision() {
        List<StepVerdict> verdicts = new ArrayList<>();
        List<StepLabel> labels = new ArrayList<>();
        for (long s = 0; s < 1000; s++) {
            boolean faulted = s >= 500 && s < 510;        // episode f1: 10 steps, 2x slower
            boolean mildFault = s >= 700 && s < 705;      // episode f2: 1.2x, below the recall threshold, never flagged
            Verdict v = s < 50 ? Verdict.WARMING_UP : (faulted && s != 509) || s == 900 ? Verdict.OUTLIER : Verdict.NORMAL;
            verdicts.add(verdict(s, v));
            labels.add(label(s, faulted ? "f1" : mildFault ? "f2" : null, faulted ? 2.0 : mildFault ? 1.2 : 1.0));
        }
        List<FaultEpisode> episodes = List.of(
                FaultEpisode.newBuilder().setFaultId("f1").setFaultType(FaultType.HOST_STALL).setInstanceId("i")
                        .setStartUnixNano(5000 * MS).setEndUnixNano(5100 * MS).setMagnitude(2).build(),
                FaultEpisode.newBuilder().setFaultId("f2").setFaultType(FaultType.CLOCK_THROTTLING).setInstanceId("i")
                        .setStartUnixNano(7000 * MS).setEndUnixNano(7050 * MS).setMagnitude(1.2).build());
        List<Incident> incidents = List.of(
                incident(500, 508, 5000, 5090, FaultType.HOST_STALL),
                incident(900, 900, 9000, 9010, FaultType.UNKNOWN));

        TruthScore s = TruthScore.score(verdicts, labels, episodes, incidents);

        assertThat(s.steps).isEqualTo(1000);
        assertThat(s.warmingUp).isEqualTo(50);
        assertThat(s.faultedStepsAtThreshold).isEqualTo(10);
        assertThat(s.stepRecall()).isEqualTo(0.9);
        assertThat(s.healthySteps).isEqualTo(985);
        assertThat(s.healthyFlagged).isEqualTo(1);
        assertThat(s.episodeRecall()).isEqualTo(0.5);
        assertThat(s.missedEpisodes).extracting(FaultEpisode::getFaultId).containsExactly("f2");
        assertThat(s.incidentPrecision()).isEqualTo(0.5);
        assertThat(s.triageAccuracy()).isEqualTo(1.0);
        assertThat(s.incidentsByClass).containsEntry(FaultType.HOST_STALL, 1).containsEntry(FaultType.UNKNOWN, 1);
    }

    @Test
    void aSustainedRegressionCountsWhenItsAlarmIsRaisedWhileTheRegressionStands() {
        List<StepVerdict> verdicts = new ArrayList<>();
        List<StepLabel> labels = new ArrayList<>();
        for (long s = 0; s < 1000; s++) {
            verdicts.add(verdict(s, Verdict.NORMAL));
            labels.add(label(s, s >= 400 ? "d" : null, s >= 400 ? 1.2 : 1.0));
        }
        List<FaultEpisode> episodes = List.of(FaultEpisode.newBuilder().setFaultId("d").setFaultType(FaultType.KERNEL_REGRESSION)
                .setInstanceId("i").setStartUnixNano(4000 * MS).setEndUnixNano(10_000 * MS).setMagnitude(1.2).setSustained(true).build());
        // named from a block before the regression began (the earliest the drift watch can tell), raised inside it
        Incident raisedInside = drift(3900, 6000);
        Incident raisedBefore = drift(2000, 3990);
        assertThat(TruthScore.score(verdicts, labels, episodes, List.of(raisedInside)).sustainedFound).isEqualTo(1);
        assertThat(TruthScore.score(verdicts, labels, episodes, List.of(raisedBefore)).sustainedFound).isZero();
    }

    private static Incident drift(long startMs, long alarmMs) {
        return Incident.newBuilder().setIncidentId("i-drift-" + alarmMs / 10).setInstanceId("i").setKind(AnomalyKind.SUSTAINED_REGRESSION)
                .setSeverity(Severity.HIGH).setClassification(FaultType.UNKNOWN).setFirstStepId(startMs / 10).setLastStepId(alarmMs / 10)
                .setNumSteps(0).setStartUnixNano(startMs * MS).setEndUnixNano(alarmMs * MS).setMaxDeviationRatio(1.2).setSummary("s").build();
    }

    private static Incident incident(long first, long last, long startMs, long endMs, FaultType cls) {
        return Incident.newBuilder().setIncidentId("i-" + first).setInstanceId("i").setKind(AnomalyKind.OUTLIER)
                .setSeverity(Severity.HIGH).setClassification(cls).setFirstStepId(first).setLastStepId(last)
                .setNumSteps((int) (last - first + 1)).setStartUnixNano(startMs * MS).setEndUnixNano(endMs * MS)
                .setMaxDeviationRatio(2).setSummary("s").build();
    }
}
