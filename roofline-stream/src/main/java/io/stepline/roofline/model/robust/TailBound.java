package io.stepline.roofline.model.robust;

import java.util.ArrayList;
import java.util.List;

/**
 * The instance's own tail of healthy variation, for the bound. A robust sigma describes the body of
 * the residuals; producers whose cost depends on what they do not report (prefix-cache hits, the
 * length of each prompt in a batch) have a heavier tail than a normal law with that sigma, and a
 * bound of k sigma flags it. This counts, over recent steps, how often a step ran between each
 * candidate bound and {@link #CEILING} (slowdowns of 1.5x and more are the anomalies the detector
 * must always catch, so they say nothing about healthy variation), and gives the smallest bound
 * exceeded no more often than {@link #DEFAULT_TAIL_RATE}. Counts decay by half every
 * {@link #HALF_LIFE_STEPS} steps, so the tail follows the instance.
 */
public final class TailBound {
    /** Share of healthy steps the bound may leave above it. */
    public static final double DEFAULT_TAIL_RATE = 0.0005;
    /** Ratios at and above this are anomalies, not tail. */
    static final double CEILING = 1.5;
    static final double STEP = 0.01;
    static final int HALF_LIFE_STEPS = 8192;
    /** Bins of log ratio, STEP wide, from 0 to log(CEILING). */
    static final int BINS = (int) Math.ceil(Math.log(CEILING) / STEP);

    private final double rate;
    private final double[] counts = new double[BINS];
    private double total;
    private int sinceDecay;

    public TailBound(double rate) {
        if (!(rate > 0 && rate < 0.1)) {
            throw new IllegalArgumentException("tail rate must be in (0, 0.1), got " + rate);
        }
        this.rate = rate;
    }

    public void observe(double logRatio) {
        observeBin(logRatio > 0 && logRatio < Math.log(CEILING) ? Math.min(BINS - 1, (int) (logRatio / STEP)) : -1);
    }

    /** A residual already quantised to hundredths of a natural log (DriftWatch's blocks). */
    public void observeQuantised(int hundredths) {
        observeBin(hundredths > 0 && hundredths < BINS ? hundredths : -1);
    }

    private void observeBin(int bin) {
        total++;
        if (bin >= 0) {
            counts[bin]++;
        }
        if (++sinceDecay >= HALF_LIFE_STEPS) {
            sinceDecay = 0;
            total /= 2;
            for (int i = 0; i < BINS; i++) {
                counts[i] /= 2;
            }
        }
    }

    /** The smallest ratio at or above {@code floor} that healthy steps exceed at most {@link #rate} of the time. */
    public double bound(double floor) {
        double above = 0;
        double allowed = rate * total;
        // walk down from the ceiling: the bound is the upper edge of the lowest bin still within the allowance
        int i = BINS - 1;
        while (i >= 0 && above + counts[i] <= allowed) {
            above += counts[i];
            i--;
        }
        double edge = Math.exp((i + 1) * STEP);
        return Math.max(floor, Math.min(CEILING, edge));
    }

    List<Double> countsState() {
        List<Double> out = new ArrayList<>(BINS + 2);
        for (double c : counts) {
            out.add(c);
        }
        out.add(total);
        out.add((double) sinceDecay);
        return out;
    }

    void restore(List<Double> state) {
        if (state.isEmpty()) {
            return;
        }
        if (state.size() != BINS + 2) {
            throw new IllegalArgumentException("tail state has " + state.size() + " values, expected " + (BINS + 2));
        }
        for (int i = 0; i < BINS; i++) {
            counts[i] = state.get(i);
        }
        total = state.get(BINS);
        sinceDecay = state.get(BINS + 1).intValue();
    }
}
