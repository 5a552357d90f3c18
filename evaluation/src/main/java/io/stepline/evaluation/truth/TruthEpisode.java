package io.stepline.evaluation.truth;

import java.util.Objects;

/**
 * One fault episode of {@code faults.json}.
 *
 * @param faultId   unique across the set; steps name it in their {@code fault_id}
 * @param instance  the instance it slowed
 * @param type      e.g. {@code host_stall}, {@code clock_throttle}; {@link #SUSTAINED_REGRESSION}
 *                  marks a regression that lasts to the end of the run, scored apart
 * @param firstStep its first step, or null if not known
 * @param lastStep  its last step, or null if not known
 * @param op        how it acted on the latency: {@link #ADD} (milliseconds added) or
 *                  {@link #MUL} (a factor), or null
 * @param value     the milliseconds or the factor, or null
 * @param sustained whether it lasts to the end of the run
 * @param cause     what the fault was when {@code type} does not say (the simulator's fault type of a
 *                  sustained regression, e.g. {@code kernel_regression}); null in the validation set
 */
public record TruthEpisode(String faultId, String instance, String type, Long firstStep, Long lastStep, String op,
                           Double value, boolean sustained, String cause) {
    /** The type the scorer treats as a sustained regression (steps excluded, reported or not per instance). */
    public static final String SUSTAINED_REGRESSION = "sustained_regression";
    public static final String ADD = "add";
    public static final String MUL = "mul";

    public TruthEpisode {
        Objects.requireNonNull(faultId, "fault_id");
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(type, "type");
    }

    /**
     * Whether the scorer treats the episode as a sustained regression: by its type, as
     * {@code score.py} does (both generators also set {@code sustained} on exactly these).
     */
    public boolean scoredAsSustained() {
        return SUSTAINED_REGRESSION.equals(type);
    }
}
