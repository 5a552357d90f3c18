package io.stepline.simulator.workload;

import java.util.SplittableRandom;

/** Inter-arrival time generators (seconds). */
public interface Arrivals {
    /** Seconds until the next request. */
    double next(SplittableRandom rng);

    static Arrivals poisson(double qps) {
        requirePositive(qps, "qps");
        return rng -> -Math.log(1 - rng.nextDouble()) / qps;
    }

    /** Gamma-distributed intervals with mean 1/qps and coefficient of variation {@code cv} (burstiness). */
    static Arrivals gamma(double qps, double cv) {
        requirePositive(qps, "qps");
        requirePositive(cv, "cv");
        double shape = 1 / (cv * cv);
        double scale = 1 / (qps * shape);
        return rng -> Distributions.gamma(rng, shape) * scale;
    }

    static Arrivals fixedInterval(double qps) {
        requirePositive(qps, "qps");
        return rng -> 1 / qps;
    }

    private static void requirePositive(double v, String name) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(name + " must be > 0, got " + v);
        }
    }
}
