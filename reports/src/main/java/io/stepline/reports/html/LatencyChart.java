package io.stepline.reports.html;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * An incident's latency over time: every judged step of the instance from a stretch before the
 * incident to a stretch after it (grey), its flagged steps (red), what the model expected and the
 * bound a step must exceed to be flagged, and the incident's window shaded. Times are UTC.
 */
public final class LatencyChart {
    static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT).withZone(ZoneOffset.UTC);
    static final DateTimeFormatter CLOCK_MS = DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT).withZone(ZoneOffset.UTC);

    private LatencyChart() {}

    /** {@code timesNs} ascending; {@code flagged[i]} marks the steps the detector flagged. */
    public static String svg(String title, long[] timesNs, double[] latencyMs, double[] expectedMs, double[] boundMs, boolean[] flagged,
                             long incidentStartNs, long incidentEndNs) {
        int n = timesNs.length;
        double[] x = new double[n];
        double[] okY = new double[n];
        double[] badY = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = timesNs[i] / 1e9;
            okY[i] = flagged[i] ? Double.NaN : latencyMs[i];
            badY[i] = flagged[i] ? latencyMs[i] : Double.NaN;
        }
        // whole seconds as HH:mm:ss, ticks between them (short windows) with milliseconds
        SvgChart c = new SvgChart(900, 320, title, "time (UTC)", "step latency (ms)", s -> {
            long ns = Math.round(s * 1e9);
            return (ns % 1_000_000_000L == 0 ? CLOCK : CLOCK_MS).format(Instant.ofEpochSecond(0, ns));
        });
        c.band("incident window", "#ff9900", incidentStartNs / 1e9, Math.max(incidentEndNs, incidentStartNs) / 1e9);
        c.dots("judged steps", "#9a9a9a", 1.6, x, okY, "step");
        c.line("expected", "#2ca02c", x, expectedMs, true);
        c.line("bound", "#1f77b4", x, boundMs, false);
        c.dots("flagged steps", "#d62728", 3, x, badY, "flagged");
        return c.svg();
    }
}
