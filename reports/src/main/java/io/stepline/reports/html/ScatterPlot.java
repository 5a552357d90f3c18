package io.stepline.reports.html;

import java.util.List;
import java.util.Locale;

/**
 * The roofline scatter as inline SVG: step latency against processed tokens for a sample of the
 * instance's steps (grey), the model's bound at each of them (the roofline as applied, blue), and
 * the incident's flagged steps (red).
 */
public final class ScatterPlot {
    static final int W = 640;
    static final int H = 360;
    static final int PAD = 48;

    private ScatterPlot() {}

    /** A point: x = processed tokens, y = latency in ms, bound = the model's bound in ms (NaN if none). */
    public record Point(double x, double y, double bound) {}

    public static String svg(List<Point> normal, List<Point> flagged, String title) {
        double maxX = 1;
        double maxY = 1;
        for (List<Point> l : List.of(normal, flagged)) {
            for (Point p : l) {
                maxX = Math.max(maxX, p.x());
                maxY = Math.max(maxY, Math.max(p.y(), Double.isNaN(p.bound()) ? 0 : p.bound()));
            }
        }
        maxX *= 1.05;
        maxY *= 1.1;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", W, H, W, H));
        b.append("<title>").append(Html.esc(title)).append("</title>");
        b.append(String.format(Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>", W, H));
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", PAD, H - PAD, W - 10, H - PAD));
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", PAD, 10, PAD, H - PAD));
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\">processed tokens (0 - %.0f)</text>", W / 2 - 60, H - 12, maxX));
        b.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"20\" font-size=\"11\">latency ms (max %.1f)</text>", maxY));
        for (Point p : normal) {
            if (!Double.isNaN(p.bound())) {
                b.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"1\" fill=\"#1f77b4\"/>", sx(p.x(), maxX) - 1, sy(p.bound(), maxY)));
            }
        }
        for (Point p : normal) {
            b.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" fill=\"#999\" fill-opacity=\"0.6\"/>", sx(p.x(), maxX), sy(p.y(), maxY)));
        }
        for (Point p : flagged) {
            b.append(String.format(Locale.ROOT, "<circle class=\"flagged\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62728\"/>", sx(p.x(), maxX), sy(p.y(), maxY)));
        }
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"11\" fill=\"#1f77b4\">bound (roofline)</text>", W - 200));
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"38\" font-size=\"11\" fill=\"#d62728\">flagged steps</text>", W - 200));
        b.append("</svg>");
        return b.toString();
    }

    private static double sx(double x, double maxX) {
        return PAD + (W - PAD - 10) * x / maxX;
    }

    private static double sy(double y, double maxY) {
        return H - PAD - (H - PAD - 10) * y / maxY;
    }
}
