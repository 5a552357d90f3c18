package io.stepline.reports.html;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

import static io.stepline.reports.html.Html.esc;

/**
 * What a sustained regression's page shows of the shift itself: the instance's drift ratio (its
 * current roofline against the reference, over the reference workload mix) at every refit over
 * time, with the regression's span shaded, and the reference and current models side by side,
 * coefficient by coefficient. The shift its steps showed, as the detector measured it, is drawn over the
 * regression's span: the model's own drift ratio follows it only once the model is re-anchored on it, which
 * a shift reported when the input ended never was.
 */
public final class DriftSection {
    private DriftSection() {}

    /** One refit of the instance's model. */
    public record Refit(long fittedAtUnixNano, double driftRatio) {}

    /**
     * The regression as reported: its span, the ratio its steps stood at above the model, and whether it was
     * reported when the input ended (the model not re-anchored on it).
     */
    public record Shift(long startNs, long endNs, double ratio, boolean atInputEnd) {}

    public static String html(String instance, List<Refit> refits, Shift shift, List<String> features, List<Double> current,
                              double currentInterceptNs, long currentVersion, List<Double> reference, Double referenceInterceptNs,
                              Long referenceVersion) {
        StringBuilder b = new StringBuilder();
        b.append("<h2>The shift</h2>");
        String measured = String.format(Locale.ROOT, "%.2fx", shift.ratio());
        if (shift.atInputEnd()) {
            b.append("<p>Reported when the input ended: its steps had stood ").append(esc(measured)).append(" above the model since it began,"
                    + " and the model was never re-anchored on it, so the model's own drift ratio stays where it was; the orange line"
                    + " is the shift its steps showed.</p>");
        }
        if (refits.isEmpty()) {
            b.append("<p>No refits of this instance's model were read.</p>");
        } else {
            double[] x = refits.stream().mapToDouble(r -> r.fittedAtUnixNano() / 1e9).toArray();
            double[] y = refits.stream().mapToDouble(Refit::driftRatio).toArray();
            SvgChart c = new SvgChart(900, 300, "Roofline of " + instance + " against its reference", "time (UTC) of each refit",
                    "current / reference latency", s -> LatencyChart.CLOCK.format(Instant.ofEpochSecond(0, Math.round(s * 1e9))));
            double from = shift.startNs() / 1e9;
            double to = Math.max(shift.startNs(), shift.endNs()) / 1e9;
            c.band("regression", "#ff9900", from, to);
            if (shift.ratio() > 0) {
                c.line("shift in its steps (" + measured + ")", "#e6550d", new double[] {from, to}, new double[] {shift.ratio(), shift.ratio()}, false);
            }
            c.line("drift ratio", "#9467bd", x, y, false);
            c.dots("refit", "#9467bd", 2.5, x, y, "refit");
            double[] one = new double[x.length];
            java.util.Arrays.fill(one, 1.0);
            c.line("unchanged (1.0)", "#2ca02c", x, one, true);
            b.append(c.svg());
        }
        if (reference == null || reference.size() != current.size()) {
            b.append("<p>The current model carries no reference to compare with.</p>");
            return b.toString();
        }
        // the basis's terms are correlated (the tokens and their hinges above each knot): a refit trades one term
        // against another, so a term's own ratio can be anything, of either sign, while the roofline as a whole
        // moved by the drift ratio
        b.append("<p>The terms of the fit are correlated (the tokens and their hinges): a refit trades one against another, "
                + "so a term's own ratio says little. The drift ratio above compares the whole roofline.</p>");
        b.append("<table class=\"models\"><tr><th>term</th><th>reference (version ").append(esc(referenceVersion)).append(")</th><th>current (version ")
                .append(currentVersion).append(")</th><th>current / reference</th></tr>");
        for (int i = 0; i < features.size() && i < current.size(); i++) {
            row(b, features.get(i) + " (ns per unit)", reference.get(i), current.get(i));
        }
        if (referenceInterceptNs != null) {
            row(b, "fixed cost per step (ns)", referenceInterceptNs, currentInterceptNs);
        }
        b.append("</table>");
        return b.toString();
    }

    private static void row(StringBuilder b, String term, double ref, double cur) {
        b.append("<tr><td>").append(esc(term)).append("</td><td>").append(esc(num(ref))).append("</td><td>").append(esc(num(cur)))
                .append("</td><td>").append(ratio(ref, cur)).append("</td></tr>");
    }

    /** The current term over the reference's, when the two have a ratio worth printing. */
    static String ratio(double ref, double cur) {
        if (ref == 0) {
            return "n/a";
        }
        if (cur != 0 && Math.signum(cur) != Math.signum(ref)) {
            return "sign changed";
        }
        return String.format(Locale.ROOT, "%.2fx", cur / ref);
    }

    private static String num(double v) {
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.3f", v);
    }
}
