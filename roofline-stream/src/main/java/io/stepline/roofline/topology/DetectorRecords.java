package io.stepline.roofline.topology;

import java.util.Arrays;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.RooflineModel;
import io.stepline.events.Severity;
import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.StepFeatures;
import io.stepline.roofline.phases.PhaseTypicals;

/** The records the step judge publishes: a verdict per judged step, anomalies, and the model after a refit. */
final class DetectorRecords {
    /** A sustained regression this many times its reference is HIGH, below it MEDIUM. */
    static final double HIGH_DRIFT_RATIO = 1.5;

    private DetectorRecords() {}

    /** {@code timestampMs}: the step record's Kafka timestamp, which the verdict carries as its produce time. */
    static StepVerdict verdict(StepCounters s, Assessment a, LatencyDetector d, long timestampMs) {
        // every field given: Avro's builder would validate and deep-copy defaults for each of the steps
        return new StepVerdict(s.getInstanceId(), s.getStepId(), s.getStartUnixNano(), s.getEndUnixNano(), s.getLatencyNs(),
                a.expectedNs(), a.boundNs(), a.ratio(), a.verdict(), a.severity(), d.kind(), a.modelVersion(),
                StepFeatures.processedTokens(s), timestampMs * 1_000_000L);
    }

    /**
     * An outlier step, carrying {@code whole}: the step with its phases (or its counters only when the rest was unreadable),
     * and the instance's phase baseline before it ({@code typicals}: the names seen {@link PhaseTypicals#DEFAULT_MIN_SEEN} times).
     */
    static Anomaly outlier(StepCounters s, StepRecord whole, Assessment a, LatencyDetector d, PhaseTypicals typicals) {
        String inst = s.getInstanceId();
        return Anomaly.newBuilder().setAnomalyId(inst + "/" + s.getStepId()).setInstanceId(inst).setKind(AnomalyKind.OUTLIER)
                .setSeverity(a.severity()).setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano())
                .setStepId(s.getStepId()).setLatencyNs(s.getLatencyNs()).setExpectedNs(a.expectedNs()).setBoundNs(a.boundNs())
                .setDeviationRatio(a.ratio()).setModelKind(d.kind()).setModelVersion(a.modelVersion()).setStep(whole)
                .setPhaseBaselineNs(typicals.baselines(PhaseTypicals.DEFAULT_MIN_SEEN)).build();
    }

    /** The model has stayed above its reference since the drift's start, raised at step {@code s}. */
    static Anomaly sustainedRegression(StepCounters s, Assessment a, LatencyDetector d) {
        String inst = s.getInstanceId();
        Assessment.Drift drift = a.drift();
        return Anomaly.newBuilder().setAnomalyId(inst + "/drift/" + s.getStepId()).setInstanceId(inst)
                .setKind(AnomalyKind.SUSTAINED_REGRESSION).setSeverity(drift.ratio() >= HIGH_DRIFT_RATIO ? Severity.HIGH : Severity.MEDIUM)
                .setStartUnixNano(drift.sinceNs()).setEndUnixNano(s.getEndUnixNano()).setStepId(s.getStepId())
                .setDeviationRatio(drift.ratio()).setModelKind(d.kind()).setModelVersion(a.modelVersion())
                .setReferenceModelVersion(drift.referenceVersion()).build();
    }

    /**
     * A shift standing when a replay's input ended ({@link LatencyDetector#standingAtEnd}), after the instance's last judged
     * step {@code lastStepId} (null when this task did not judge it: a model restored from the store) that ended at
     * {@code lastEndNs}; marked {@code at_input_end}.
     */
    static Anomaly standingAtEnd(String inst, Assessment.Drift drift, LatencyDetector d, Long lastStepId, long lastEndNs) {
        return Anomaly.newBuilder().setAnomalyId(inst + "/drift-at-end/" + (lastStepId == null ? "" : lastStepId)).setInstanceId(inst)
                .setKind(AnomalyKind.SUSTAINED_REGRESSION).setSeverity(drift.ratio() >= HIGH_DRIFT_RATIO ? Severity.HIGH : Severity.MEDIUM)
                .setStartUnixNano(drift.sinceNs()).setEndUnixNano(Math.max(lastEndNs, drift.sinceNs())).setStepId(lastStepId)
                .setDeviationRatio(drift.ratio()).setModelKind(d.kind()).setModelVersion(d.version())
                .setReferenceModelVersion(drift.referenceVersion()).setAtInputEnd(true).build();
    }

    /** The instance's current model (compacted topic: the latest per instance). */
    static RooflineModel roofline(String inst, LatencyDetector d, long nowNs) {
        RooflineModel.Builder m = RooflineModel.newBuilder().setInstanceId(inst).setModelKind(d.kind()).setVersion(d.version())
                .setFittedAtUnixNano(nowNs).setStepsSeen(d.stepsSeen()).setFeatureNames(Arrays.asList(d.featureNames()))
                .setCoefficients(Arrays.stream(d.coefficients()).boxed().toList()).setInterceptNs(d.interceptNs())
                .setBoundRatio(d.boundRatio());
        if (d.referenceCoefficients() != null) {
            m.setReferenceCoefficients(Arrays.stream(d.referenceCoefficients()).boxed().toList())
                    .setReferenceInterceptNs(d.referenceInterceptNs()).setReferenceVersion(d.referenceVersion());
        }
        if (!Double.isNaN(d.driftRatio())) {
            m.setDriftRatio(d.driftRatio());
        }
        LatencyDetector.Coverage c = d.coverage();
        if (c != null) {
            m.setExtrapolatedSteps(c.extrapolatedSteps()).setBeyondSteps(c.beyondSteps()).setContextDriftSteps(c.contextDriftSteps());
        }
        return m.build();
    }
}
