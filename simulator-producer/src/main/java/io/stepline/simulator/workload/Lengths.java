package io.stepline.simulator.workload;

import java.util.SplittableRandom;

/** Token-length generators for prompts and outputs. */
public interface Lengths {
    int next(SplittableRandom rng);

    static Lengths fixed(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("length must be >= 1, got " + n);
        }
        return rng -> n;
    }

    static Lengths uniform(int min, int max) {
        if (min < 1 || max < min) {
            throw new IllegalArgumentException("uniform lengths need 1 <= min <= max, got " + min + ".." + max);
        }
        return rng -> min + rng.nextInt(max - min + 1);
    }

    /** Zipf over [min, max] with exponent {@code s}: many short, a few long. */
    static Lengths zipf(int min, int max, double s) {
        if (min < 1 || max < min || !(s > 0)) {
            throw new IllegalArgumentException("zipf lengths need 1 <= min <= max and s > 0");
        }
        int n = max - min + 1;
        double[] cdf = new double[n];
        double sum = 0;
        for (int k = 1; k <= n; k++) {
            sum += 1 / Math.pow(k, s);
            cdf[k - 1] = sum;
        }
        for (int i = 0; i < n; i++) {
            cdf[i] /= sum;
        }
        return rng -> {
            double u = rng.nextDouble();
            int lo = 0;
            int hi = n - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (cdf[mid] < u) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return min + lo;
        };
    }
}
