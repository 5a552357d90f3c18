package io.stepline.reports.incident;

import java.nio.file.Path;
import java.util.Objects;

import io.stepline.evaluation.OutlierRuns;

/** Validated settings of the reporter, with documented defaults. */
public record ReporterSettings(Path outDir, double ttftSloS, double tpotSloS, int maxGapSteps, long maxGapNs, int minSteps,
                               long alertIntervalNs, int horizonSteps, long idleCloseMs, int kernelLatenessSteps) {
    /** StriaTrace's production SLOs. */
    public static final double DEFAULT_TTFT_SLO_S = 10;
    /** StriaTrace's production SLO for the time per output token. */
    public static final double DEFAULT_TPOT_SLO_S = 0.1;
    /** At most one alert per instance per minute of incident time; the rest are counted. Sustained regressions are not limited. */
    public static final long DEFAULT_ALERT_INTERVAL_NS = 60_000_000_000L;
    /**
     * Judged steps after an outlier run's last step before its incident is written. A sustained regression
     * folds in the runs that began after its start, and the detector's drift watch dates that start at
     * most 15 blocks of 100 judged steps (DriftWatch's window, 1,500) before the step that raised it: once
     * every anomaly through this many steps after a run has been read, no regression can fold the run
     * any more, whatever the pace the topics were read at.
     */
    public static final int DEFAULT_HORIZON_STEPS = 2_000;
    /**
     * Wall time without a step, verdict or anomaly of an instance after which its open and ended incidents
     * are written without waiting for its steps to move on, if the silence is the instance's own (its
     * partitions went on without it, or the stages before the reporter have nothing left to consume:
     * {@link IncidentReporter#closeIdle}): an instance that stopped sending steps still gets them. The only
     * rule of the reporter that depends on the pace of its input; longer than a stage takes to restart after
     * a crash (3-22 s measured, docs/BENCHMARKS.md).
     */
    public static final long DEFAULT_IDLE_CLOSE_MS = 30_000;
    /** The idle time's bounds: a second at least (the reporter's poll), an hour at most. */
    public static final long MIN_IDLE_CLOSE_MS = 1_000;
    public static final long MAX_IDLE_CLOSE_MS = 3_600_000;

    /**
     * What is wrong with an idle time of {@code seconds} (null: nothing), as "must be in [1, 3600], got N": the one
     * check of its bounds, which the commands that take it in seconds prefix with their own option's name.
     */
    public static String idleSecondsProblem(long seconds) {
        long min = MIN_IDLE_CLOSE_MS / 1000;
        long max = MAX_IDLE_CLOSE_MS / 1000;
        return seconds < min || seconds > max ? "must be in [" + min + ", " + max + "], got " + seconds : null;
    }

    public ReporterSettings {
        Objects.requireNonNull(outDir, "outDir");
        if (!(ttftSloS > 0) || !(tpotSloS > 0)) {
            throw new IllegalArgumentException("SLOs must be > 0");
        }
        if (maxGapSteps < 0 || maxGapNs < 0 || minSteps < 1 || alertIntervalNs < 0 || idleCloseMs < 0) {
            throw new IllegalArgumentException("gaps, intervals and delays must be >= 0 and minSteps >= 1");
        }
        String lateness = io.stepline.schemas.KernelLateness.problem(kernelLatenessSteps);
        if (lateness != null) {
            throw new IllegalArgumentException("kernel lateness " + lateness);
        }
        if (idleCloseMs < MIN_IDLE_CLOSE_MS || idleCloseMs > MAX_IDLE_CLOSE_MS) {
            throw new IllegalArgumentException("the idle time must be in [" + MIN_IDLE_CLOSE_MS / 1000 + " s, " + MAX_IDLE_CLOSE_MS / 1000 + " s], got "
                    + idleCloseMs + " ms");
        }
        if (horizonSteps <= maxGapSteps) {
            throw new IllegalArgumentException("the horizon (" + horizonSteps + " steps) must be longer than the gap within a run (" + maxGapSteps + ")");
        }
    }

    public static ReporterSettings defaults(Path outDir) {
        return new ReporterSettings(outDir, DEFAULT_TTFT_SLO_S, DEFAULT_TPOT_SLO_S, OutlierRuns.DEFAULT_MAX_GAP_STEPS,
                OutlierRuns.DEFAULT_MAX_GAP_NS, OutlierRuns.DEFAULT_MIN_STEPS, DEFAULT_ALERT_INTERVAL_NS, DEFAULT_HORIZON_STEPS,
                DEFAULT_IDLE_CLOSE_MS, io.stepline.schemas.KernelLateness.DEFAULT_STEPS);
    }

    public ReporterSettings withSlos(double ttft, double tpot) {
        return new ReporterSettings(outDir, ttft, tpot, maxGapSteps, maxGapNs, minSteps, alertIntervalNs, horizonSteps, idleCloseMs, kernelLatenessSteps);
    }

    /** The same with another horizon (steps after a run before its incident is written; see {@link #DEFAULT_HORIZON_STEPS}). */
    public ReporterSettings withHorizonSteps(int steps) {
        return new ReporterSettings(outDir, ttftSloS, tpotSloS, maxGapSteps, maxGapNs, minSteps, alertIntervalNs, steps, idleCloseMs, kernelLatenessSteps);
    }

    /**
     * The same with another idle time (see {@link #DEFAULT_IDLE_CLOSE_MS}): shorter writes a stopped instance's incidents
     * sooner; either way only once its silence is its own.
     */
    public ReporterSettings withIdleCloseMs(long ms) {
        return new ReporterSettings(outDir, ttftSloS, tpotSloS, maxGapSteps, maxGapNs, minSteps, alertIntervalNs, horizonSteps, ms, kernelLatenessSteps);
    }

    /**
     * The same with another kernel lateness: the detector's ({@link io.stepline.schemas.KernelLateness}), or more.
     * A run's kernel evidence is taken once the steps read through pass its last step by this many; with a
     * shorter wait than the detector's a batch it still retains may come after its run was triaged.
     */
    public ReporterSettings withKernelLatenessSteps(int steps) {
        return new ReporterSettings(outDir, ttftSloS, tpotSloS, maxGapSteps, maxGapNs, minSteps, alertIntervalNs, horizonSteps, idleCloseMs, steps);
    }
}
