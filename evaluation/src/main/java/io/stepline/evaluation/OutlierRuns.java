package io.stepline.evaluation;

import java.util.ArrayList;
import java.util.List;

/**
 * Groups one instance's flagged steps into runs: consecutive flagged steps, allowing gaps of up
 * to {@code maxGapSteps} unflagged steps and {@code maxGapNs} of time. Used for incidents (in
 * reports) and for scoring incident precision (in the evaluation harness).
 */
public final class OutlierRuns {
    /** Most unflagged steps between two outliers of one run. */
    public static final int DEFAULT_MAX_GAP_STEPS = 8;
    /** Most step time between two outliers of one run (2 s). */
    public static final long DEFAULT_MAX_GAP_NS = 2_000_000_000L;
    /**
     * Flagged steps a run needs to be an incident. One: a host stall or a straggler rank slows a single
     * step, and the default model flags so few healthy steps (under 0.02% on independent validation
     * traces, docs/BENCHMARKS.md) that a lone flagged step is worth an incident.
     */
    public static final int DEFAULT_MIN_STEPS = 1;
    /**
     * A run of one flagged step is an incident only if that step ran this much slower than expected. A
     * host stall or a straggler that slows a single step is worth an incident when it is gross; a lone
     * step just over the bound is, far more often, the healthy tail (on the simulator's campaigns most
     * incidents were such steps, docs/BENCHMARKS.md). The step stays flagged on the anomalies topic.
     */
    public static final double DEFAULT_MIN_LONE_RATIO = 1.5;

    private final int maxGapSteps;
    private final long maxGapNs;
    private final int minSteps;
    private final double minLoneRatio;
    private final List<Run> closed = new ArrayList<>();
    private Run open;

    public OutlierRuns(int maxGapSteps, long maxGapNs) {
        this(maxGapSteps, maxGapNs, DEFAULT_MIN_STEPS);
    }

    public OutlierRuns(int maxGapSteps, long maxGapNs, int minSteps) {
        this(maxGapSteps, maxGapNs, minSteps, DEFAULT_MIN_LONE_RATIO);
    }

    public OutlierRuns(int maxGapSteps, long maxGapNs, int minSteps, double minLoneRatio) {
        if (maxGapSteps < 0 || maxGapNs < 0 || minSteps < 1 || !(minLoneRatio >= 1)) {
            throw new IllegalArgumentException("gaps must be >= 0, minSteps >= 1 and minLoneRatio >= 1");
        }
        this.maxGapSteps = maxGapSteps;
        this.maxGapNs = maxGapNs;
        this.minSteps = minSteps;
        this.minLoneRatio = minLoneRatio;
    }

    /** Whether a run (open or closed) is an incident: enough steps, and a lone step gross enough. */
    public boolean isIncident(Run r) {
        return r.steps >= minSteps && (r.steps > 1 || r.maxRatio >= minLoneRatio);
    }

    private Run close() {
        Run done = open;
        open = null;
        if (!isIncident(done)) {
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
        return add(stepId, startNs, endNs, ratio, 1.0);
    }

    /**
     * As {@link #add(long, long, long, double)}, for an instance of which only a share of the step ids
     * is judged (sampled step tracing): the gap allowed in step ids widens by 1 / {@code judgedShare},
     * so that it still means {@code maxGapSteps} judged steps.
     */
    public Run add(long stepId, long startNs, long endNs, double ratio, double judgedShare) {
        if (!(judgedShare > 0 && judgedShare <= 1)) {
            throw new IllegalArgumentException("judged share must be in (0, 1], got " + judgedShare);
        }
        long gap = (long) Math.ceil(maxGapSteps / judgedShare);
        Run done = null;
        if (open != null && (stepId - open.lastStep - 1 > gap || open.firstStep - stepId - 1 > gap || startNs - open.endNs > maxGapNs)) {
            done = close();
        }
        if (open == null) {
            open = new Run();
            open.firstStep = stepId;
            open.startNs = startNs;
        }
        // form A steps may arrive a little out of order (spans exported in batches): a run spans them all
        open.firstStep = Math.min(open.firstStep, stepId);
        open.lastStep = Math.max(open.lastStep, stepId);
        open.startNs = Math.min(open.startNs, startNs);
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

    /** Drops the open run: its steps belong to something reported otherwise (a sustained regression). */
    public Run discardOpen() {
        Run dropped = open;
        open = null;
        return dropped;
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
