package io.stepline.ingest.accounting;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accounting a command prints after ingesting: records accepted (and without a latency),
 * degraded by reason, dead-lettered by reason, per instance, the producer warnings, and a WARN
 * when more than {@link #DEFAULT_DEAD_LETTER_WARN_SHARE} of the outcomes were dead letters.
 */
public final class IngestSummary {
    private static final Logger log = LoggerFactory.getLogger(IngestSummary.class);

    /** More than 1% of the input dead-lettered is a producer problem worth a WARN (and a failure under --strict). */
    public static final double DEFAULT_DEAD_LETTER_WARN_SHARE = 0.01;
    /** Exit code of a command run with --strict when more than that share was dead-lettered (2 is a usage error, 1 a failure). */
    public static final int EXIT_TOO_MANY_DEAD_LETTERS = 3;
    /** Instances listed one per line; a fleet's worth would bury the totals. */
    public static final int DEFAULT_MAX_INSTANCE_LINES = 40;
    /** Dead-letter reasons named in the WARN. */
    static final int TOP_REASONS = 3;

    private IngestSummary() {}

    /**
     * Prints the summary of {@code s}.
     *
     * @param latencyKnown false when the records were only checked, not assembled (form B latencies are not known yet)
     * @return true when more than {@link #DEFAULT_DEAD_LETTER_WARN_SHARE} of the outcomes were dead letters
     */
    public static boolean print(PrintWriter out, IngestStats s, boolean latencyKnown) {
        out.printf(Locale.ROOT, "step records accepted: %,d%s; request events: %,d;%s dead letters: %,d%n", s.steps(),
                latencyKnown ? String.format(Locale.ROOT, " (%,d without a latency, not judged)", s.stepsWithoutLatency()) : "",
                s.requests(), s.kernelBatches() > 0 ? String.format(Locale.ROOT, " kernel batches: %,d;", s.kernelBatches()) : "",
                s.deadLetteredTotal());
        out.println("  degraded step records by reason: " + byReason(s.degraded()));
        out.println("  dead letters by reason: " + byReason(s.deadLettered()));
        Map<String, IngestStats.InstanceCounts> instances = s.perInstance();
        if (!instances.isEmpty()) {
            int width = Math.max(8, instances.keySet().stream().mapToInt(String::length).max().orElse(8));
            out.printf(Locale.ROOT, "  %-" + width + "s %10s %10s %9s %12s  %s%n", "instance", "steps", "no latency", "requests", "dead letters",
                    "degraded by reason");
            int n = 0;
            for (Map.Entry<String, IngestStats.InstanceCounts> e : instances.entrySet()) {
                if (n++ == DEFAULT_MAX_INSTANCE_LINES) {
                    out.printf(Locale.ROOT, "  ... and %,d more instances%n", instances.size() - DEFAULT_MAX_INSTANCE_LINES);
                    break;
                }
                IngestStats.InstanceCounts c = e.getValue();
                out.printf(Locale.ROOT, "  %-" + width + "s %,10d %10s %,9d %,12d  %s%n", e.getKey(), c.steps(),
                        latencyKnown ? String.format(Locale.ROOT, "%,d", c.withoutLatency()) : "-", c.requests(), c.deadLettered(),
                        byReason(c.degraded()));
            }
        }
        for (ProducerWarning w : s.warnings()) {
            out.println("WARN " + w.describe());
        }
        long dead = s.deadLetteredTotal();
        long all = s.outcomes();
        boolean tooMany = all > 0 && dead > DEFAULT_DEAD_LETTER_WARN_SHARE * all;
        if (tooMany) {
            String msg = String.format(Locale.ROOT, "%.1f%% of the input was dead-lettered (%,d of %,d records); top reasons: %s (see stepline.dlq)",
                    100.0 * dead / all, dead, all, topReasons(s.deadLettered()));
            log.warn(msg);
            out.println("WARN " + msg);
        }
        out.flush();
        return tooMany;
    }

    static String byReason(Map<String, Long> counts) {
        if (counts.isEmpty()) {
            return "none";
        }
        return counts.entrySet().stream().map(e -> String.format(Locale.ROOT, "%s %,d", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
    }

    static String topReasons(Map<String, Long> counts) {
        List<Map.Entry<String, Long>> sorted = counts.entrySet().stream()
                .sorted((a, b) -> a.getValue().equals(b.getValue()) ? a.getKey().compareTo(b.getKey()) : Long.compare(b.getValue(), a.getValue()))
                .limit(TOP_REASONS).toList();
        return sorted.stream().map(e -> String.format(Locale.ROOT, "%s %,d", e.getKey(), e.getValue())).collect(Collectors.joining(", "));
    }
}
