package io.stepline.reports;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.Severity;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

/**
 * The detector's output for one instance whose steps come 50 ms apart, for the reporter's pace tests:
 * a verdict per step, an outlier (3x) for each flagged step, and a sustained regression raised at
 * {@code driftStep} that began at {@code driftSinceStep}.
 */
record OneInstance(String id, LongPredicate flagged, long driftStep, long driftSinceStep) {
    static final long T0 = 1_767_225_600_000_000_000L;
    static final long STEP_NS = 50_000_000L;

    static long start(long i) {
        return T0 + i * STEP_NS;
    }

    StepVerdict verdict(long i) {
        boolean bad = flagged.test(i);
        long lat = bad ? 30_000_000L : 10_000_000L;
        return StepVerdict.newBuilder().setInstanceId(id).setStepId(i).setStartUnixNano(start(i)).setEndUnixNano(start(i) + lat).setLatencyNs(lat)
                .setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(lat / 10e6).setVerdict(bad ? Verdict.OUTLIER : Verdict.NORMAL)
                .setSeverity(bad ? Severity.HIGH : Severity.NONE).setModelKind("robust").setModelVersion(3).setProcessedTokens(4).build();
    }

    /** What the detector wrote with the verdict of step {@code i}, in its order: the outlier, then the regression. */
    List<Anomaly> anomalies(long i) {
        List<Anomaly> out = new ArrayList<>();
        if (flagged.test(i)) {
            out.add(Anomaly.newBuilder().setAnomalyId(id + "/" + i).setInstanceId(id).setKind(AnomalyKind.OUTLIER).setSeverity(Severity.HIGH)
                    .setStartUnixNano(start(i)).setEndUnixNano(start(i) + 30_000_000L).setStepId(i).setLatencyNs(30_000_000L).setExpectedNs(10e6)
                    .setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3)
                    .setStep(IncidentReporterTest.step(id, i, start(i), 30_000_000L)).build());
        }
        if (i == driftStep) {
            out.add(Anomaly.newBuilder().setAnomalyId(id + "/drift/" + i).setInstanceId(id).setKind(AnomalyKind.SUSTAINED_REGRESSION)
                    .setSeverity(Severity.MEDIUM).setStartUnixNano(start(driftSinceStep)).setEndUnixNano(start(i) + 10_000_000L)
                    .setStepId(i).setDeviationRatio(1.3).setModelKind("robust").setModelVersion(3).setReferenceModelVersion(1L).build());
        }
        return out;
    }
}
