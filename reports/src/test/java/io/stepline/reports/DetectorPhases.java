package io.stepline.reports;

import java.util.Map;

import io.stepline.events.StepRecord;
import io.stepline.roofline.phases.PhaseTypicals;

/** The phase baseline the detector gives one instance's anomalies: its {@link PhaseTypicals}, learned from the sampled steps in order. */
final class DetectorPhases {
    private final PhaseTypicals typicals = new PhaseTypicals();

    /** What an anomaly of {@code s} carries (the baseline before it); then learns from {@code s} as the detector does. */
    Map<String, Double> before(StepRecord s) {
        Map<String, Double> baseline = typicals.baselines(PhaseTypicals.DEFAULT_MIN_SEEN);
        if (PhaseTypicals.sampled(s.getStepId())) {
            typicals.learn(s.getPhases());
        }
        return baseline;
    }
}
