package io.stepline.roofline.eval;

import java.util.ArrayList;
import java.util.List;

/**
 * Groups one instance's flagged steps into runs: consecutive flagged steps, allowing gaps of up
 * to {@code maxGapSteps} unflagged steps and {@code maxGapNs} of time. Used for incidents (in
 * reports) and for scoring incident precision (in the evaluation harness).
 */
public final class OutlierRuns {
    public static final int DEFAULT_MAX_GAP_STEPS = 8;
    public static final long DEFAULT_MAX_GAP_NS = 2_000_000_000L;
    /** A lone flagged step is kept as an anomaly but is no incident: natural variance makes those. */
    public static final int DEFAULT_MIN_STEPS = 2;

    private final int maxGapSteps;
    private final long maxGapNs;
    private final int minSteps;
    private final List<Run> closed = new ArrayList<>();
    private Run open;

    public OutlierRuns(int maxGapSteps, long maxGapNs) {
        this(maxGapSteps, maxGapNs, DEFAULT_MIN_STEPS);
    }

    public OutlierRuns(int maxGapSteps, long maxGapNs, int minSteps) {
        if (maxGapSteps < 0 || maxGapNs < 0 || minSteps < 1) {
            throw new IllegalArgumentException("gaps must be >= 0 and minSteps >= 1");
        }
        this.maxGapSteps = maxGapSteps;
        this.maxGapNs = maxGapNs;
        this.minSteps = minSteps;
    }

    private Run close() {
        Run done = open;
        open = null;
        if (done.steps < minSteps) {
            return null;
        }
        closed.add(done);
        return done;
    }

    /** A run of flagged steps. */
    public static final class Run {
        public long firstStep;
        public long lastStep;
        public long startNs;
        public long endNs;
        public int steps;
        public double maxRatio;
    }

    /** Adds a flagged step (in step order); returns the run it closed, if the gap closed one. */
    public Run add(long stepId, long startNs, long endNs, double ratio) {
        Run done = null;
        if (open != null && (stepId - open.lastStep - 1 > maxGapSteps || startNs - open.endNs > maxGapNs)) {
            done = close();
        }
        if (open == null) {
            open = new Run();
            open.firstStep = stepId;
            open.startNs = startNs;
        }
        open.lastStep = stepId;
        open.endNs = Math.max(open.endNs, endNs);
        open.steps++;
        open.maxRatio = Math.max(open.maxRatio, ratio);
        return done;
    }

    /** Closes the open run if the instance has moved past the allowed gap. */
    public Run advance(long stepId, long startNs) {
        if (open != null && (stepId - open.lastStep - 1 > maxGapSteps || startNs - open.endNs > maxGapNs)) {
            return close();
        }
        return null;
    }

    /** Closes the open run (end of input); null when none or too short. */
    public Run flush() {
        return open == null ? null : close();
    }

    public List<Run> closed() {
        return closed;
    }

    public Run open() {
        return open;
    }
}
