package io.stepline.simulator.latency;

import java.util.SplittableRandom;

/**
 * Run-to-run variation of a healthy step: a lognormal body (small multiplicative jitter from
 * clocks, caches, launch timing) and a rare heavy tail (Pareto) for the natural slow steps every
 * real fleet shows (GC pauses, page faults, interrupts). The tail is what a bare P99 line
 * mistakes for anomalies.
 */
public final class Noise {
    /** Sigma of the lognormal body: about 4% run-to-run jitter of a healthy step. */
    public static final double DEFAULT_SIGMA = 0.04;
    /** Share of healthy steps that fall in the heavy tail (two in a thousand). */
    public static final double DEFAULT_TAIL_PROBABILITY = 0.002;
    /** Slowdown per unit of the Pareto draw in the tail (capped at 10 units: at most 1.8x). */
    public static final double DEFAULT_TAIL_SCALE = 0.08;
    /** Pareto shape of the tail: smaller is heavier. */
    public static final double DEFAULT_TAIL_ALPHA = 2.5;

    private final double sigma;
    private final double tailProbability;
    private final double tailScale;
    private final double tailAlpha;

    public Noise(double sigma, double tailProbability, double tailScale, double tailAlpha) {
        if (sigma < 0 || sigma > 1) {
            throw new IllegalArgumentException("noise sigma must be in [0, 1], got " + sigma);
        }
        if (tailProbability < 0 || tailProbability > 1) {
            throw new IllegalArgumentException("tail probability must be in [0, 1], got " + tailProbability);
        }
        this.sigma = sigma;
        this.tailProbability = tailProbability;
        this.tailScale = tailScale;
        this.tailAlpha = tailAlpha;
    }

    public static Noise defaults() {
        return new Noise(DEFAULT_SIGMA, DEFAULT_TAIL_PROBABILITY, DEFAULT_TAIL_SCALE, DEFAULT_TAIL_ALPHA);
    }

    public static Noise none() {
        return new Noise(0, 0, 0, DEFAULT_TAIL_ALPHA);
    }

    /** A multiplicative factor (>= ~0.85) for one step. */
    public double factor(SplittableRandom rng) {
        double f = Math.exp(sigma * gaussian(rng) - sigma * sigma / 2);
        if (tailProbability > 0 && rng.nextDouble() < tailProbability) {
            double pareto = Math.pow(1 - rng.nextDouble(), -1 / tailAlpha) - 1;
            f *= 1 + tailScale * Math.min(pareto, 10);
        }
        return f;
    }

    static double gaussian(SplittableRandom rng) {
        double u1 = rng.nextDouble();
        double u2 = rng.nextDouble();
        return Math.sqrt(-2 * Math.log(Math.max(u1, 1e-300))) * Math.cos(2 * Math.PI * u2);
    }
}
