package io.stepline.reports.service;

import java.util.BitSet;

/**
 * The step id up to which every verdict of one instance has been read, allowing for steps the detector
 * judged out of order (ingest lets a form A step wait up to its reorder window for its phase spans
 * while later steps go ahead). A missing step id holds the mark back until its verdict comes, or until
 * {@code skipAfter} verdicts of later steps have been read: then it is taken as a step that gets no
 * verdict (sampled step tracing, a step without latency).
 */
final class StepWatermark {
    /**
     * Verdicts of later steps read before a missing step id is passed over. Longer than ingest reorders
     * steps by (2 s of steps: ~230 of the simulator's, 500 at 4 ms a step), so that a step judged late
     * still counts before the steps after it are taken as read through.
     */
    static final int DEFAULT_SKIP_AFTER = 1_000;

    private final int skipAfter;
    private boolean started;
    private long mark;
    /** Bit i: the verdict of step mark + 1 + i has been read. */
    private BitSet above = new BitSet();
    private int count;

    StepWatermark(int skipAfter) {
        if (skipAfter < 1) {
            throw new IllegalArgumentException("skipAfter must be >= 1, got " + skipAfter);
        }
        this.skipAfter = skipAfter;
    }

    /** A verdict read; returns the mark (every step id up to it read or passed over). */
    long add(long stepId) {
        if (!started) {
            started = true;
            mark = stepId; // what came before the first verdict read is no concern of this process
            return mark;
        }
        if (stepId <= mark) {
            return mark;
        }
        long offset = stepId - mark - 1;
        if (offset >= Integer.MAX_VALUE - 64) {
            shift(above.length()); // a jump no reordering explains: the steps before it are over
            mark = stepId;
            return mark;
        }
        if (!above.get((int) offset)) {
            above.set((int) offset);
            count++;
        }
        shift(above.nextClearBit(0));
        while (count > skipAfter) {
            shift(above.nextSetBit(0)); // the first missing step is one that gets no verdict
            shift(above.nextClearBit(0));
        }
        return mark;
    }

    long mark() {
        return mark;
    }

    boolean started() {
        return started;
    }

    private void shift(int n) {
        if (n <= 0) {
            return;
        }
        count -= above.get(0, n).cardinality();
        above = above.get(n, Math.max(n, above.length()));
        mark += n;
    }
}
