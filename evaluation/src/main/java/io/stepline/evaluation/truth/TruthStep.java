package io.stepline.evaluation.truth;

import java.util.Objects;

/**
 * One line of {@code truth.jsonl}: what one step really was.
 *
 * @param instance  the serving instance, as the traces name it
 * @param stepId    the step's id on that instance
 * @param label     {@link #CLEAN}, {@link #INTRINSIC} (natural variance: neither right nor wrong to
 *                  flag) or {@link #FAULT}
 * @param faultId   the episode in {@code faults.json} that slowed the step, or null
 * @param slowdown  latency against what the step would have taken clean; null if unknown
 * @param latencyMs the step's latency; null if unknown
 * @param scorable  whether a detector could know the step's latency from the traces at all
 *                  (sampled producers leave some unknowable); unscorable steps are not scored
 */
public record TruthStep(String instance, long stepId, String label, String faultId, Double slowdown, Double latencyMs,
                        boolean scorable) {
    public static final String CLEAN = "clean";
    public static final String INTRINSIC = "intrinsic";
    public static final String FAULT = "fault";

    public TruthStep {
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(label, "label");
    }
}
