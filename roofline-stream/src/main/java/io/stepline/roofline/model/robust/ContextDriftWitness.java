package io.stepline.roofline.model.robust;

import io.stepline.events.RooflineStateHeader;

/**
 * A producer without the KV context: whether a decode-heavy outlier is the unreported context's drift, not a fault,
 * told by the last prefill-heavy step (the witness: its cost is set by the prompt tokens the producer reports) and the
 * decode-heavy step before it. Such outliers are counted and judged NORMAL.
 */
final class ContextDriftWitness {
    /**
     * A producer without the KV context: its last prefill-heavy step (a cost the prompt tokens it reports set) speaks
     * for the device's health this many judged steps on. A decode-heavy step's cost depends on the context its requests
     * read, which such a producer does not report, and the batch level follows it with a lag: when the batch shrinks to
     * requests with long contexts, decode steps run 1.4-1.6x above the model for tens of steps while the prefill steps
     * between them run as the model says (the validation log instance: 307 of the 574 false positives of 27 sets, in
     * clusters). Longer than 16 steps, a throttle that began after a calm prefill step went unreported for up to 40
     * decode steps of a decode-heavy stretch (validation seed 22).
     */
    static final int WITNESS_STEPS = 16;
    /** ...when it ran within this ratio of the model. */
    static final double WITNESS_CALM_LOG = Math.log(1.15);
    /**
     * A decode-heavy step above the bound but below this ratio, right after another decode-heavy step at least
     * {@link #DRIFT_RUN_LOG} above the model, while the witness is calm, is the unreported context's drift: counted,
     * judged NORMAL, and still not learned from (the model moves as for an outlier, so a fault it hides is not absorbed).
     * The context's clusters ran 1.26-1.77x (median 1.44), the faulted steps such a rule hid 1.41-1.8x (median 1.65):
     * at 1.8, 142 false positives and 146 faulted steps went; at 1.55, 126 and 27 (27 validation-style sets,
     * docs/BENCHMARKS.md). A fault that slows every step (a throttle, contention) shows in the next prefill step.
     */
    static final double CONTEXT_DRIFT_MAX_RATIO = 1.55;
    /**
     * The step before must already run this far above the model: the context drifts over a run of decode steps, while
     * a straggler rank or a host stall slows one or a few; without it, 23 single-step faults went unreported.
     */
    static final double DRIFT_RUN_LOG = Math.log(1.25);

    /** {@code steps} at the last prefill-heavy judged step (-1: none yet), and its log ratio (the witness). */
    private long witnessStep = -1;
    private double witnessLog;
    /** The last decode-heavy judged step's log ratio. */
    private double previousDecodeLog;
    /** Outliers judged the context's drift. */
    private long drifted;

    /**
     * Keeps the witness and the run before a step, whatever its verdict, and says whether the step, {@code step}
     * of the instance, would be the context's drift were it an outlier.
     */
    boolean explains(long step, double prefillShare, double ratio, double logRatio) {
        if (prefillShare >= EpisodeLatch.PREFILL_SHARE) {
            witnessStep = step;
            witnessLog = logRatio;
            return false;
        }
        boolean byContext = ratio < CONTEXT_DRIFT_MAX_RATIO && previousDecodeLog > DRIFT_RUN_LOG && witnessStep >= 0
                && step - witnessStep <= WITNESS_STEPS && witnessLog < WITNESS_CALM_LOG;
        previousDecodeLog = logRatio;
        return byContext;
    }

    /** Counts an outlier judged the context's drift. */
    void drifted() {
        drifted++;
    }

    /** Outliers judged the context's drift so far. */
    long driftedSteps() {
        return drifted;
    }

    void saveTo(RooflineStateHeader h) {
        h.setWitnessStep(witnessStep);
        h.setWitnessLog(witnessLog);
        h.setPreviousDecodeLog(previousDecodeLog);
        h.setContextDriftSteps(drifted);
    }

    void restore(RooflineStateHeader h) {
        witnessStep = h.getWitnessStep();
        witnessLog = h.getWitnessLog();
        previousDecodeLog = h.getPreviousDecodeLog();
        drifted = h.getContextDriftSteps();
    }
}
