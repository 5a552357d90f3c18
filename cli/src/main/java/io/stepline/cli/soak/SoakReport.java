package io.stepline.cli.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import io.stepline.reports.html.Html;
import io.stepline.reports.html.SvgChart;

/**
 * What a soak run shows: the samples as CSV, charts of memory, stores and lag over time, and for
 * each quantity its trend over the second half of the run (the first half includes the JIT, the
 * stores filling and the heap finding its size), as the least-squares slope in percent of the
 * quantity's mean per ten minutes.
 */
public final class SoakReport {
    /** A quantity sampled over the run. */
    public record Series(String name, String unit, double scale, ToDoubleFunction<SoakSample> value) {}

    /** The trend of one quantity over the second half: its mean and slope (units per 10 min, and percent of the mean per 10 min). */
    public record Trend(String name, String unit, double mean, double slopePer10Min, double percentPer10Min) {}

    public static final List<Series> SERIES = List.of(
            new Series("heap after GC", "MB", 1e-6, SoakSample::heapAfterGcBytes),
            new Series("heap used", "MB", 1e-6, SoakSample::heapUsedBytes),
            new Series("RSS", "MB", 1e-6, SoakSample::rssBytes),
            new Series("store entries", "entries", 1, SoakSample::storeEntries),
            new Series("store bytes", "MB", 1e-6, SoakSample::storeBytes),
            new Series("ingest lag", "records", 1, SoakSample::ingestLag),
            new Series("detector lag", "records", 1, SoakSample::detectorLag));

    private SoakReport() {}

    /** The trend of every {@link #SERIES} over the samples of the second half of the run. */
    public static List<Trend> trends(List<SoakSample> samples) {
        List<Trend> out = new ArrayList<>();
        if (samples.size() < 4) {
            return out;
        }
        double half = samples.get(samples.size() - 1).seconds() / 2;
        List<SoakSample> late = samples.stream().filter(s -> s.seconds() >= half).toList();
        for (Series series : SERIES) {
            double[] x = late.stream().mapToDouble(SoakSample::seconds).toArray();
            double[] y = late.stream().mapToDouble(s -> series.value().applyAsDouble(s) * series.scale()).toArray();
            double mean = mean(y);
            double slope = slope(x, y) * 600;
            out.add(new Trend(series.name(), series.unit(), mean, slope, mean == 0 ? 0 : 100 * slope / Math.abs(mean)));
        }
        return out;
    }

    static double mean(double[] v) {
        double s = 0;
        for (double d : v) {
            s += d;
        }
        return v.length == 0 ? Double.NaN : s / v.length;
    }

    /** Least-squares slope of y on x (0 when x does not vary). */
    static double slope(double[] x, double[] y) {
        double mx = mean(x);
        double my = mean(y);
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < x.length; i++) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
        }
        return sxx == 0 ? 0 : sxy / sxx;
    }

    public static void writeCsv(Path file, List<SoakSample> samples) throws IOException {
        StringBuilder b = new StringBuilder(SoakSample.CSV_HEADER).append('\n');
        samples.forEach(s -> b.append(s.csv()).append('\n'));
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    }

    /** A self-contained page: the run's settings, the trends table and one chart per group of quantities. */
    public static void writeHtml(Path file, String settings, List<SoakSample> samples) throws IOException {
        double[] minutes = samples.stream().mapToDouble(s -> s.seconds() / 60).toArray();
        StringBuilder b = new StringBuilder("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Stepline soak</title>")
                .append("<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>")
                .append("</head><body><h1>Stepline soak</h1><p>").append(Html.esc(settings)).append("</p>")
                .append("<table><tr><th>quantity</th><th>mean, second half</th><th>slope per 10 min</th><th>% of mean per 10 min</th></tr>");
        for (Trend t : trends(samples)) {
            b.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>%.1f %s</td><td>%+.2f %s</td><td>%+.2f%%</td></tr>", Html.esc(t.name()), t.mean(),
                    Html.esc(t.unit()), t.slopePer10Min(), Html.esc(t.unit()), t.percentPer10Min()));
        }
        b.append("</table>");
        b.append(chart("Memory (MB)", "MB", minutes, samples, SERIES.subList(0, 3)));
        b.append(chart("State stores", "entries / MB", minutes, samples, SERIES.subList(3, 5)));
        b.append(chart("Lag (records)", "records", minutes, samples, SERIES.subList(5, 7)));
        b.append("</body></html>\n");
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    }

    private static String chart(String title, String yTitle, double[] minutes, List<SoakSample> samples, List<Series> series) {
        String[] colors = {"#1f77b4", "#ff7f0e", "#2ca02c"};
        SvgChart c = new SvgChart(900, 260, title, "minutes", yTitle, v -> String.format(Locale.ROOT, "%.0f", v));
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            double[] y = samples.stream().mapToDouble(x -> s.value().applyAsDouble(x) * s.scale()).toArray();
            c.line(s.name() + " (" + s.unit() + ")", colors[i % colors.length], minutes, y, false);
        }
        return "<div>" + c.svg() + "</div>";
    }
}
