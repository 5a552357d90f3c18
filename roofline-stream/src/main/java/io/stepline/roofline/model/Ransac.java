package io.stepline.roofline.model;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.commons.math3.stat.regression.OLSMultipleLinearRegression;

/**
 * RANSAC (Fischler and Bolles) on top of Commons Math least squares: repeatedly fit a minimal
 * random subset, count the points whose prediction error is within the tolerance, keep the
 * largest consensus set and refit on it. Tolerances are relative (|y / yhat - 1|), because step
 * latency noise is multiplicative. Deterministic for a given seed.
 */
public final class Ransac {
    /** Random minimal subsets tried per fit: with a third of the points outliers, the chance that none of 64 two-point subsets is clean is below 1e-10. */
    public static final int DEFAULT_ITERATIONS = 64;
    /** A point within 15% of a candidate line is in its consensus set (step latency noise is multiplicative). */
    public static final double DEFAULT_TOLERANCE = 0.15;

    private final int iterations;
    private final double tolerance;
    private final long seed;

    public Ransac(int iterations, double tolerance, long seed) {
        if (iterations < 1) {
            throw new IllegalArgumentException("RANSAC needs >= 1 iteration");
        }
        if (!(tolerance > 0)) {
            throw new IllegalArgumentException("RANSAC tolerance must be > 0");
        }
        this.iterations = iterations;
        this.tolerance = tolerance;
        this.seed = seed;
    }

    /** A fitted linear model: y = intercept + sum(coef[i] * x[i]). */
    public record Fit(double intercept, double[] coefficients, int inliers) {
        public double predict(double[] x) {
            double y = intercept;
            for (int i = 0; i < coefficients.length; i++) {
                y += coefficients[i] * x[i];
            }
            return y;
        }
    }

    /** Fits {@code ys ~ xs}; null when no subset could be fitted (too few or degenerate points). */
    public Fit fit(List<double[]> xs, List<Double> ys) {
        int n = xs.size();
        if (n == 0) {
            return null;
        }
        int k = xs.get(0).length;
        int minimal = k + 2;
        if (n < minimal) {
            return null;
        }
        SplittableRandom rng = new SplittableRandom(seed);
        Fit best = null;
        int bestCount = -1;
        for (int it = 0; it < iterations; it++) {
            List<double[]> sx = new ArrayList<>(minimal);
            List<Double> sy = new ArrayList<>(minimal);
            for (int j = 0; j < minimal; j++) {
                int idx = rng.nextInt(n);
                sx.add(xs.get(idx));
                sy.add(ys.get(idx));
            }
            Fit candidate = ols(sx, sy);
            if (candidate == null) {
                continue;
            }
            int count = 0;
            for (int i = 0; i < n; i++) {
                if (inlier(candidate, xs.get(i), ys.get(i))) {
                    count++;
                }
            }
            if (count > bestCount) {
                bestCount = count;
                best = candidate;
            }
        }
        if (best == null) {
            return ols(xs, ys);
        }
        List<double[]> ix = new ArrayList<>();
        List<Double> iy = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (inlier(best, xs.get(i), ys.get(i))) {
                ix.add(xs.get(i));
                iy.add(ys.get(i));
            }
        }
        Fit refit = ix.size() >= minimal ? ols(ix, iy) : null;
        return refit == null ? best : new Fit(refit.intercept(), refit.coefficients(), ix.size());
    }

    private boolean inlier(Fit f, double[] x, double y) {
        double p = f.predict(x);
        return p > 0 && Math.abs(y / p - 1) <= tolerance;
    }

    /** Ordinary least squares with Commons Math; null when the design matrix is singular. */
    public static Fit ols(List<double[]> xs, List<Double> ys) {
        int n = xs.size();
        int k = xs.get(0).length;
        double[][] x = xs.toArray(new double[0][]);
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            y[i] = ys.get(i);
        }
        if (k == 0) {
            double mean = 0;
            for (double v : y) {
                mean += v;
            }
            return new Fit(mean / n, new double[0], n);
        }
        try {
            OLSMultipleLinearRegression ols = new OLSMultipleLinearRegression();
            ols.newSampleData(y, x);
            double[] beta = ols.estimateRegressionParameters();
            double[] coef = new double[k];
            System.arraycopy(beta, 1, coef, 0, k);
            for (double b : beta) {
                if (!Double.isFinite(b)) {
                    return null;
                }
            }
            return new Fit(beta[0], coef, n);
        } catch (IllegalArgumentException e) { // includes SingularMatrixException
            return null;
        }
    }
}
