package io.stepline.cli.pipeline;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.evaluation.TruthScore;
import io.stepline.roofline.retention.RetentionStats;

/** The end-of-demo table: what was processed, found, missed and kept. */
public final class DemoSummary {
    private DemoSummary() {}

    public static void print(PrintWriter out, TruthScore s, long anomalies, RetentionStats retention, Path reports, double wallS) {
        out.println();
        out.println("==================== Stepline demo: what was found ====================");
        out.printf(Locale.ROOT, "steps processed            %,d (%,d warming up)%n", s.steps, s.warmingUp);
        out.printf(Locale.ROOT, "anomalies                  %,d flagged steps and sustained regressions%n", anomalies);
        out.printf(Locale.ROOT, "incidents                  %d:", s.incidents);
        for (Map.Entry<FaultType, Integer> e : s.incidentsByClass.entrySet()) {
            out.printf(Locale.ROOT, " %s=%d", e.getKey(), e.getValue());
        }
        out.println();
        out.printf(Locale.ROOT, "injected faults found      %d of %d (episode recall %s)%n", s.episodesFound, s.episodes, pct(s.episodeRecall()));
        for (FaultEpisode e : s.missedEpisodes) {
            out.printf(Locale.ROOT, "  missed: %s %s on %s (magnitude %.2f)%n", e.getFaultId(), e.getFaultType(), e.getInstanceId(), e.getMagnitude());
        }
        out.printf(Locale.ROOT, "sustained regressions      %d of %d detected as drift%n", s.sustainedFound, s.sustainedEpisodes);
        out.printf(Locale.ROOT, "step recall (>= 1.5x)      %s of %,d faulted steps%n", pct(s.stepRecall()), s.faultedStepsAtThreshold);
        out.printf(Locale.ROOT, "false positives (healthy)  %s (%d of %,d)%n", pct3(s.falsePositiveRate()), s.healthyFlagged, s.healthySteps);
        out.printf(Locale.ROOT, "incident precision         %s (%d of %d overlap a real fault)%n", pct(s.incidentPrecision()), s.trueIncidents, s.incidents);
        out.printf(Locale.ROOT, "triage accuracy            %s (%d of %d true incidents classified as the injected type)%n",
                pct(s.triageAccuracy()), s.triagedCorrectly, s.triaged);
        out.printf(Locale.ROOT, "kernel retention           %s of kernel bytes kept (%,d of %,d bytes)%n", pct(retention.retentionRatio()),
                retention.retainedBytes(), retention.totalBytes());
        out.printf(Locale.ROOT, "reports                    %s%n", reports.resolve("index.html").toAbsolutePath());
        out.printf(Locale.ROOT, "wall time                  %.1f s%n", wallS);
        out.println("========================================================================");
        out.flush();
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100 * v);
    }

    static String pct3(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.3f%%", 100 * v);
    }
}
