package io.stepline.simulator.sink;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * {@code %.Nf}-style fixed-point text of a double, HALF_UP on its shortest decimal form, as
 * {@code BigDecimal.valueOf(v).setScale(N, HALF_UP)} gives it, without building a BigDecimal
 * except near a tie: the CSV sinks write millions of these and BigDecimal was the larger part of it.
 */
final class FixedDecimal {
    private static final long[] POW10 = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000};
    /** Below this the product v * 10^scale is exact to far better than {@link #TIE_MARGIN}. */
    private static final double FAST_LIMIT = 1e10;
    private static final double TIE_MARGIN = 1e-4;

    private FixedDecimal() {}

    static String format(double v, int scale) {
        if (scale < 0 || scale >= POW10.length) {
            throw new IllegalArgumentException("scale must be in [0, " + (POW10.length - 1) + "], got " + scale);
        }
        double scaled = v * POW10[scale];
        if (Math.abs(scaled) < FAST_LIMIT) {
            double floor = Math.floor(scaled);
            double frac = scaled - floor;
            if (Math.abs(frac - 0.5) > TIE_MARGIN) {
                return digits((long) (frac > 0.5 ? floor + 1 : floor), scale);
            }
        }
        return BigDecimal.valueOf(v).setScale(scale, RoundingMode.HALF_UP).toPlainString();
    }

    private static String digits(long units, int scale) {
        StringBuilder sb = new StringBuilder(24);
        if (units < 0) {
            sb.append('-');
            units = -units;
        }
        sb.append(units / POW10[scale]);
        if (scale > 0) {
            String frac = Long.toString(units % POW10[scale]);
            sb.append('.');
            for (int i = frac.length(); i < scale; i++) {
                sb.append('0');
            }
            sb.append(frac);
        }
        return sb.toString();
    }
}
