package io.stepline.roofline.model.robust;

import io.stepline.events.RooflineStateHeader;

/**
 * A burst's slowdown followed from known work into decode work the model does not know, step by step.
 *
 * <p>Why: a throttle often carries the load from the batches the model knows into lighter ones it never ran, and there
 * the fit's extrapolation errs, most often high: a line through heavier work, where a decode step's cost falls faster
 * than the line as the batch shrinks (padding to fewer CUDA-graph sizes, less KV context). Against it a 1.5x throttle
 * read 0.9-1.2x, under what a burst flags in new work, and the burst ended while the throttle went on (validation-style
 * faults2-8204, v-dec-7b-b: batches of 30-99 requests where the fit ran 1.2-1.7x high, 310 of a 1.6x throttle's steps
 * missed, 240 with the chain, its steps coming up to 100 out of order; fleet2-8206, w-mix-70b-a: batches of 8-48,
 * 1.3-1.5x high, unchanged: there the load jumps between CUDA-graph sizes whose error differs by more than half the
 * throttle, faster than the chain follows). The load moves across the work gradually, and so does
 * the fit's error with it; a device that recovers drops at once. So from the first step of new decode work right after
 * slow known work, the chain reads each step against the extrapolation corrected by the error the steps before it showed
 * net of the burst's slowdown, and follows that error as the load moves on ({@link RecentVerdicts#BURST_ALPHA} per step);
 * a step that drops under half the burst's slowdown is not followed, and the chain lasts as long as the burst: known
 * steps between leave it as it is (ended by them, over 506 validation-style sets 36 more slowed steps went unflagged and
 * 13 more clean steps were flagged).
 *
 * <p>Started only right after slow known work (the previous judged step was one, and the last
 * {@link RecentVerdicts#SLOW_KNOWN_FLAGS} known steps were reported): started again later in the same burst, after a
 * throttle's end had ended one, it followed healthy new work where the fit ran low as a burst of its own (validation
 * gen.py 7001, v-dec-7b-b: 45 more healthy steps flagged). Nothing is learned from it: the chain only judges.
 */
final class NewWorkChain {
    private boolean active;
    /** The fit's log error in the new decode work the chain judged last, net of the burst's slowdown. */
    private double errorLog;

    boolean active() {
        return active;
    }

    /** The chain's log error: what the extrapolation is corrected by for the next step of new decode work. */
    double errorLog() {
        return errorLog;
    }

    /** Starts the chain at the first step of new decode work, the fit corrected by {@code startLog} (at most 0). */
    void start(double startLog) {
        active = true;
        errorLog = startLog;
    }

    /** A step the chain judged ran near the burst's slowdown: follow the fit's error, {@code stepErrorLog}, there. */
    void follow(double stepErrorLog) {
        errorLog += RecentVerdicts.BURST_ALPHA * (stepErrorLog - errorLog);
    }

    void end() {
        active = false;
    }

    void saveTo(RooflineStateHeader h) {
        h.setChainActive(active);
        h.setChainErrorLog(errorLog);
    }

    void restore(RooflineStateHeader h) {
        active = h.getChainActive();
        errorLog = h.getChainErrorLog();
    }
}
