package io.stepline.reports.html;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * A small inline-SVG chart with real axes: ticks at round values (1, 2 or 5 times a power of ten),
 * gridlines, tick labels, axis titles and a legend; series as polylines, dots or shaded x-ranges.
 * Reports stay self-contained (no script, nothing fetched when a page is viewed) and every string
 * that goes in is escaped.
 */
public final class SvgChart {
    static final int LEFT = 64;
    static final int RIGHT = 16;
    /** The plot's top without a legend; each row of the legend, which runs between the title and the plot, adds {@link #LEGEND_ROW}. */
    static final int TOP = 28;
    static final int LEGEND_ROW = 15;
    static final int BOTTOM = 44;
    /** At most this many ticks per axis. */
    static final int MAX_TICKS = 8;

    private final int width;
    private final int height;
    private final String title;
    private final String xTitle;
    private final String yTitle;
    private final DoubleFunction<String> xLabel;
    private double minX = Double.POSITIVE_INFINITY;
    private double maxX = Double.NEGATIVE_INFINITY;
    private double maxY = 0;
    private final List<Runnable> layers = new ArrayList<>();
    private final List<String[]> legend = new ArrayList<>();
    private final StringBuilder body = new StringBuilder();

    /** {@code xLabel} formats an x tick (a time, a count); y ticks are plain numbers, y starts at 0. */
    public SvgChart(int width, int height, String title, String xTitle, String yTitle, DoubleFunction<String> xLabel) {
        this.width = width;
        this.height = height;
        this.title = title;
        this.xTitle = xTitle;
        this.yTitle = yTitle;
        this.xLabel = xLabel;
    }

    private void extend(double[] xs, double[] ys) {
        for (int i = 0; i < xs.length; i++) {
            if (Double.isFinite(xs[i]) && (ys == null || Double.isFinite(ys[i]))) {
                minX = Math.min(minX, xs[i]);
                maxX = Math.max(maxX, xs[i]);
                if (ys != null) {
                    maxY = Math.max(maxY, ys[i]);
                }
            }
        }
    }

    /** A line through the points (NaN y breaks it). */
    public SvgChart line(String name, String color, double[] xs, double[] ys, boolean dashed) {
        extend(xs, ys);
        legend.add(new String[] {name, color, "line"});
        layers.add(() -> {
            StringBuilder d = new StringBuilder();
            boolean pen = false;
            for (int i = 0; i < xs.length; i++) {
                if (!Double.isFinite(xs[i]) || !Double.isFinite(ys[i])) {
                    pen = false;
                    continue;
                }
                d.append(pen ? " L" : " M").append(f(sx(xs[i]))).append(' ').append(f(sy(ys[i])));
                pen = true;
            }
            if (d.length() > 0) {
                body.append("<path class=\"series\" d=\"").append(d.toString().trim()).append("\" fill=\"none\" stroke=\"").append(color)
                        .append("\" stroke-width=\"1.5\"").append(dashed ? " stroke-dasharray=\"6 4\"" : "").append("/>");
            }
        });
        return this;
    }

    /** Dots at the points; {@code cssClass} marks them for tests and styles. */
    public SvgChart dots(String name, String color, double radius, double[] xs, double[] ys, String cssClass) {
        extend(xs, ys);
        legend.add(new String[] {name, color, "dot"});
        layers.add(() -> {
            for (int i = 0; i < xs.length; i++) {
                if (Double.isFinite(xs[i]) && Double.isFinite(ys[i])) {
                    body.append("<circle class=\"").append(Html.esc(cssClass)).append("\" cx=\"").append(f(sx(xs[i]))).append("\" cy=\"")
                            .append(f(sy(ys[i]))).append("\" r=\"").append(f(radius)).append("\" fill=\"").append(color).append("\"/>");
                }
            }
        });
        return this;
    }

    /** A shaded band over [from, to] on the x axis, behind the series. */
    public SvgChart band(String name, String color, double from, double to) {
        extend(new double[] {from, to}, null);
        legend.add(new String[] {name, color, "band"});
        layers.add(0, () -> body.append("<rect class=\"band\" x=\"").append(f(sx(from))).append("\" y=\"").append(top).append("\" width=\"")
                .append(f(Math.max(1, sx(to) - sx(from)))).append("\" height=\"").append(height - top - BOTTOM).append("\" fill=\"").append(color)
                .append("\" fill-opacity=\"0.18\"/>"));
        return this;
    }

    private double yTop;
    /** The plot's top: under the title and the legend's rows ({@link #svg} places them first). */
    private int top = TOP;
    /** Each legend entry's x and row, in the order added. */
    private final List<int[]> legendAt = new ArrayList<>();

    /**
     * Places the legend's entries left to right between the title and the plot, a new row when one would run past the
     * right edge: drawn over the plot's top right, it covered the data there (a regression's shift line, the latency
     * chart's highest steps). Text widths are estimated at 6.5 px a character of the 11 px font.
     */
    private void placeLegend() {
        legendAt.clear();
        int x = LEFT;
        int row = 0;
        for (String[] l : legend) {
            int w = 24 + (int) Math.ceil(6.5 * l[0].length()) + 16;
            if (x > LEFT && x + w > width - RIGHT) {
                row++;
                x = LEFT;
            }
            legendAt.add(new int[] {x, row});
            x += w;
        }
        top = TOP + (legend.isEmpty() ? 0 : (row + 1) * LEGEND_ROW);
    }

    private double sx(double x) {
        double span = maxX - minX;
        return LEFT + (width - LEFT - RIGHT) * (span <= 0 ? 0.5 : (x - minX) / span);
    }

    private double sy(double y) {
        return height - BOTTOM - (height - top - BOTTOM) * Math.min(y, yTop) / yTop;
    }

    public String svg() {
        placeLegend();
        if (!(maxX >= minX)) {
            minX = 0;
            maxX = 1;
        }
        double[] yTicks = ticks(0, maxY <= 0 ? 1 : maxY * 1.05);
        yTop = yTicks[yTicks.length - 1];
        double[] xTicks = integerX ? integerTicks(minX, maxX) : ticks(minX, maxX);
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                + " font-family=\"sans-serif\" font-size=\"11\">", width, height, width, height));
        b.append("<title>").append(Html.esc(title)).append("</title>");
        b.append("<rect x=\"0\" y=\"0\" width=\"").append(width).append("\" height=\"").append(height).append("\" fill=\"#fff\"/>");
        b.append("<text x=\"").append(LEFT).append("\" y=\"16\" font-size=\"13\" font-weight=\"bold\">").append(Html.esc(title)).append("</text>");
        for (double t : yTicks) {
            double y = sy(t);
            b.append("<line class=\"grid\" x1=\"").append(LEFT).append("\" x2=\"").append(width - RIGHT).append("\" y1=\"").append(f(y))
                    .append("\" y2=\"").append(f(y)).append("\" stroke=\"#e4e4e4\"/>");
            b.append("<text class=\"tick\" x=\"").append(LEFT - 6).append("\" y=\"").append(f(y + 4)).append("\" text-anchor=\"end\">")
                    .append(Html.esc(number(t))).append("</text>");
        }
        for (double t : xTicks) {
            if (t < minX || t > maxX) {
                continue;
            }
            double x = sx(t);
            b.append("<line class=\"grid\" x1=\"").append(f(x)).append("\" x2=\"").append(f(x)).append("\" y1=\"").append(top).append("\" y2=\"")
                    .append(height - BOTTOM).append("\" stroke=\"#e4e4e4\"/>");
            b.append("<text class=\"tick\" x=\"").append(f(x)).append("\" y=\"").append(height - BOTTOM + 15).append("\" text-anchor=\"middle\">")
                    .append(Html.esc(xLabel.apply(t))).append("</text>");
        }
        layers.forEach(Runnable::run);
        b.append(body);
        b.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(height - BOTTOM).append("\" x2=\"").append(width - RIGHT).append("\" y2=\"")
                .append(height - BOTTOM).append("\" stroke=\"#333\"/>");
        b.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(top).append("\" x2=\"").append(LEFT).append("\" y2=\"").append(height - BOTTOM)
                .append("\" stroke=\"#333\"/>");
        b.append("<text x=\"").append((LEFT + width - RIGHT) / 2).append("\" y=\"").append(height - 8).append("\" text-anchor=\"middle\">")
                .append(Html.esc(xTitle)).append("</text>");
        b.append("<text transform=\"translate(14 ").append((top + height - BOTTOM) / 2).append(") rotate(-90)\" text-anchor=\"middle\">")
                .append(Html.esc(yTitle)).append("</text>");
        for (int i = 0; i < legend.size(); i++) {
            String[] l = legend.get(i);
            int lx = legendAt.get(i)[0];
            int ly = TOP - 4 + legendAt.get(i)[1] * LEGEND_ROW;
            String color = l[1];
            switch (l[2]) {
                case "line" -> b.append("<line x1=\"").append(lx).append("\" x2=\"").append(lx + 18).append("\" y1=\"").append(ly + 4)
                        .append("\" y2=\"").append(ly + 4).append("\" stroke=\"").append(color).append("\" stroke-width=\"2\"/>");
                case "dot" -> b.append("<circle cx=\"").append(lx + 9).append("\" cy=\"").append(ly + 4).append("\" r=\"3.5\" fill=\"").append(color)
                        .append("\"/>");
                default -> b.append("<rect x=\"").append(lx).append("\" y=\"").append(ly).append("\" width=\"18\" height=\"9\" fill=\"").append(color)
                        .append("\" fill-opacity=\"0.3\"/>");
            }
            b.append("<text class=\"legend\" x=\"").append(lx + 24).append("\" y=\"").append(ly + 8).append("\">").append(Html.esc(l[0])).append("</text>");
        }
        b.append("</svg>");
        return b.toString();
    }

    private boolean integerX;

    /** The x axis counts things (a batch size): ticks only at whole numbers. */
    public SvgChart integerX() {
        this.integerX = true;
        return this;
    }

    static double[] integerTicks(double lo, double hi) {
        double[] t = ticks(lo, hi);
        if (t.length < 2 || t[1] - t[0] >= 1) {
            return t;
        }
        List<Double> out = new ArrayList<>();
        for (double v = Math.ceil(lo); v <= hi; v++) {
            out.add(v);
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten. */
    static double[] ticks(double lo, double hi) {
        if (!(hi > lo)) {
            hi = lo + 1;
        }
        double raw = (hi - lo) / (MAX_TICKS - 1);
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = mag * (raw <= mag ? 1 : raw <= 2 * mag ? 2 : raw <= 5 * mag ? 5 : 10);
        double first = Math.floor(lo / step) * step;
        List<Double> out = new ArrayList<>();
        for (double t = first; t < hi + step * 0.999; t += step) {
            out.add(Math.abs(t) < step * 1e-9 ? 0 : t);
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    static String number(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return String.format(Locale.ROOT, "%,d", (long) v);
        }
        return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
