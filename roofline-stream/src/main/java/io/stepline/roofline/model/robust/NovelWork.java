package io.stepline.roofline.model.robust;

import io.stepline.events.RooflineStateHeader;

/**
 * Work beyond what the model was trained on (a batch past a hinge no training step reached) is not judged by the
 * fit, whose guess there may be far off, and is learned from, since nothing else can teach the model that work.
 * But once that work's cell holds a few points, their median residual to the fit is the cell's own correction of
 * the guess, as it is for every known cell at a refit: a step that runs {@link #JUMP_RATIO} above it is a slowdown
 * begun in the new work. It is flagged against the cell and not learned: learned, a contention that began 46 steps
 * after a decode instance's batch first crossed a hinge filled the new cells with its 2.4x steps, and the model then
 * read the rest of it as healthy (validation seed 703 at 4,000 steps, v-dec-7b-b: 127 of 130 steps missed).
 */
final class NovelWork {
    /**
     * A step this far above its cell's points jumped: a slowdown, not the spread of the cell's work. Wider than a
     * known cell's bound: the cell's points are few and recent, and a prefill cell spans 1.5x in prompt tokens.
     */
    static final double JUMP_RATIO = 1.5;
    static final double JUMP_LOG = Math.log(JUMP_RATIO);
    /**
     * Jumps in a row after which they are the work's cost now (a regression begun in the new work), learned again:
     * longer than the contentions and kernel slowdowns the detector must keep flagging.
     */
    static final int MAX_HELD = 256;

    private int held;

    /**
     * Takes a step beyond the training: its log residual to the fit and its cell's median one (NaN: too few points),
     * and whether it exceeds what the cell says by the detector's minimum excess. True when it jumped (flag it, do
     * not learn it); false when it is to be learned.
     */
    boolean jumped(double stepResidual, double cellResidual, boolean excessOk) {
        if (!(stepResidual - cellResidual > JUMP_LOG) || !excessOk) {
            held = 0; // NaN (no cell median yet, a step of no latency) compares false: learned
            return false;
        }
        if (held >= MAX_HELD) {
            return false;
        }
        held++;
        return true;
    }

    /** The state as the header stores it. */
    void saveTo(RooflineStateHeader h) {
        h.setNovelHeld(held);
    }

    void restore(RooflineStateHeader h) {
        held = h.getNovelHeld();
    }
}
