package io.stepline.simulator.workload;

import java.util.SplittableRandom;

/** Small samplers on a {@link SplittableRandom} so that every draw is reproducible from the seed. */
final class Distributions {
    private Distributions() {}

    static double gaussian(SplittableRandom rng) {
        double u1 = rng.nextDouble();
        double u2 = rng.nextDouble();
        return Math.sqrt(-2 * Math.log(Math.max(u1, 1e-300))) * Math.cos(2 * Math.PI * u2);
    }

    /** Marsaglia-Tsang gamma(shape, 1). */
    static double gamma(SplittableRandom rng, double shape) {
        if (shape < 1) {
            return gamma(rng, shape + 1) * Math.pow(rng.nextDouble(), 1 / shape);
        }
        double d = shape - 1.0 / 3;
        double c = 1 / Math.sqrt(9 * d);
        while (true) {
            double x = gaussian(rng);
            double v = 1 + c * x;
            if (v <= 0) {
                continue;
            }
            v = v * v * v;
            double u = rng.nextDouble();
            if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) {
                return d * v;
            }
        }
    }
}
