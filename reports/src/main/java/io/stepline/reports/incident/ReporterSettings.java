package io.stepline.reports.incident;

import java.nio.file.Path;
import java.util.Objects;

import io.stepline.evaluation.OutlierRuns;

/** Validated settings of the reporter, with documented defaults. */
public record ReporterSettings(Path outDir, double ttftSloS, double tpotSloS, int maxGapSteps, long maxGapNs, int minSteps,
                               long alertIntervalNs, long liveCloseDelayMs) {
    /** StriaTrace's production SLOs. */
    public static final double DEFAULT_TTFT_SLO_S = 10;
    /** StriaTrace's production SLO for the time per output token. */
    public static final double DEFAULT_TPOT_SLO_S = 0.1;
    /** At most one alert per instance per minute of incident time; the rest are counted. */
    public static final long DEFAULT_ALERT_INTERVAL_NS = 60_000_000_000L;
    /** Live mode closes an incident this long after its last anomaly arrived (late kernel batches still make it). */
    public static final long DEFAULT_LIVE_CLOSE_DELAY_MS = 5_000;

    public ReporterSettings {
        Objects.requireNonNull(outDir, "outDir");
        if (!(ttftSloS > 0) || !(tpotSloS > 0)) {
            throw new IllegalArgumentException("SLOs must be > 0");
        }
        if (maxGapSteps < 0 || maxGapNs < 0 || minSteps < 1 || alertIntervalNs < 0 || liveCloseDelayMs < 0) {
            throw new IllegalArgumentException("gaps, intervals and delays must be >= 0 and minSteps >= 1");
        }
    }

    public static ReporterSettings defaults(Path outDir) {
        return new ReporterSettings(outDir, DEFAULT_TTFT_SLO_S, DEFAULT_TPOT_SLO_S, OutlierRuns.DEFAULT_MAX_GAP_STEPS,
                OutlierRuns.DEFAULT_MAX_GAP_NS, OutlierRuns.DEFAULT_MIN_STEPS, DEFAULT_ALERT_INTERVAL_NS, DEFAULT_LIVE_CLOSE_DELAY_MS);
    }

    public ReporterSettings withSlos(double ttft, double tpot) {
        return new ReporterSettings(outDir, ttft, tpot, maxGapSteps, maxGapNs, minSteps, alertIntervalNs, liveCloseDelayMs);
    }
}
