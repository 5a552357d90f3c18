package io.stepline.reports.html;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The roofline as the instance lives it: step latency against the work that explains it, one chart
 * for steps with prefill work (x = prefill tokens) and one for decode-only steps (x = batch size,
 * which processed tokens would squeeze against the y axis next to prefill chunks). Grey dots are a
 * sample of the instance's judged steps, the blue line the bound the detector applied (median per
 * x bin: with more than one feature the bound of equal x varies), red the incident's flagged steps.
 */
public final class ScatterPlot {
    /** Bins of the bound line on the prefill-tokens axis. */
    static final int BINS = 40;

    private ScatterPlot() {}

    /** A step: x = prefill tokens, or batch size when {@code decodeOnly}; y = latency ms; bound in ms (NaN if none). */
    public record Point(double x, double y, double bound, boolean decodeOnly) {}

    /** One SVG per kind of step that has points (decode-only, with prefill), or a note when there is none. */
    public static String svg(List<Point> normal, List<Point> flagged, String instance) {
        StringBuilder b = new StringBuilder();
        for (boolean decodeOnly : new boolean[] {false, true}) {
            List<Point> n = normal.stream().filter(p -> p.decodeOnly() == decodeOnly).toList();
            List<Point> f = flagged.stream().filter(p -> p.decodeOnly() == decodeOnly).toList();
            if (n.isEmpty() && f.isEmpty()) {
                continue;
            }
            String what = decodeOnly ? "decode-only steps" : "steps with prefill";
            SvgChart c = new SvgChart(640, 340, "Roofline of " + instance + ": " + what, decodeOnly ? "batch size (decode requests)" : "prefill tokens",
                    "step latency (ms)", SvgChart::number);
            if (decodeOnly) {
                c.integerX();
            }
            c.dots("judged steps (sample)", "#9a9a9a", 1.6, xs(n), ys(n), "step");
            double[][] line = boundLine(n, decodeOnly);
            c.line("bound (median per bin)", "#1f77b4", line[0], line[1], false);
            c.dots("flagged steps", "#d62728", 3, xs(f), ys(f), "flagged");
            b.append(c.svg());
        }
        return b.length() == 0 ? "<p>No judged steps of this instance are held.</p>" : b.toString();
    }

    private static double[] xs(List<Point> ps) {
        return ps.stream().mapToDouble(Point::x).toArray();
    }

    private static double[] ys(List<Point> ps) {
        return ps.stream().mapToDouble(Point::y).toArray();
    }

    /** Median bound per x bin (per batch size for decode-only steps), as a line from left to right. */
    static double[][] boundLine(List<Point> ps, boolean exactX) {
        double maxX = ps.stream().mapToDouble(Point::x).max().orElse(1);
        double width = exactX ? 1 : Math.max(1, maxX / BINS);
        Map<Long, List<Double>> bins = new TreeMap<>();
        for (Point p : ps) {
            if (!Double.isNaN(p.bound())) {
                bins.computeIfAbsent((long) Math.floor(p.x() / width), k -> new ArrayList<>()).add(p.bound());
            }
        }
        double[] x = new double[bins.size()];
        double[] y = new double[bins.size()];
        int i = 0;
        for (Map.Entry<Long, List<Double>> e : bins.entrySet()) {
            List<Double> v = e.getValue();
            v.sort(Double::compare);
            x[i] = exactX ? e.getKey() : (e.getKey() + 0.5) * width;
            y[i] = v.get(v.size() / 2);
            i++;
        }
        return new double[][] {x, y};
    }
}
