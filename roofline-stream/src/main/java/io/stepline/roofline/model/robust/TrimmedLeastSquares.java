package io.stepline.roofline.model.robust;

import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.CholeskyDecomposition;
import org.apache.commons.math3.linear.NonPositiveDefiniteMatrixException;
import org.apache.commons.math3.linear.RealMatrix;

/**
 * Least squares on relative error (each point weighted by 1 / latency squared, so a 5 ms step
 * counts as much as a 500 ms one), with a small ridge penalty (features that do not vary, or vary
 * together, get a defined fit), refitted without the points it explains worst: a fault inside
 * the training data pulls the first fit, the trimmed refit no longer sees it.
 */
public final class TrimmedLeastSquares {
    /** Share of the points dropped before the refit. */
    public static final double DEFAULT_TRIM = 0.15;
    /** Ridge penalty relative to the weighted sum of squares of each feature. */
    static final double RIDGE = 1e-6;

    private TrimmedLeastSquares() {}

    /**
     * @param x   one basis row per point ({@link CostBasis#SIZE} columns)
     * @param y   latency of each point, > 0
     * @param n   points used (the first n rows)
     * @return coefficients, or null when the system cannot be solved
     */
    public static double[] fit(double[][] x, double[] y, int n, double trim) {
        if (n < CostBasis.SIZE) {
            return null;
        }
        boolean[] keep = new boolean[n];
        java.util.Arrays.fill(keep, true);
        double[] coef = solve(x, y, n, keep);
        if (coef == null || trim <= 0) {
            return coef;
        }
        double[] err = new double[n];
        for (int i = 0; i < n; i++) {
            err[i] = Math.abs(CostBasis.dot(coef, x[i]) / y[i] - 1);
        }
        double[] sorted = err.clone();
        java.util.Arrays.sort(sorted);
        double cut = sorted[Math.max(0, (int) Math.floor(n * (1 - trim)) - 1)];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            keep[i] = err[i] <= cut;
            kept += keep[i] ? 1 : 0;
        }
        if (kept < CostBasis.SIZE) {
            return coef;
        }
        double[] refit = solve(x, y, n, keep);
        return refit == null ? coef : refit;
    }

    private static double[] solve(double[][] x, double[] y, int n, boolean[] keep) {
        int k = CostBasis.SIZE;
        // weights relative to a typical latency: 1 / y^2 in ns would be ~1e-15 and fall under the solver's tolerances
        double scale = 0;
        int kept = 0;
        for (int i = 0; i < n; i++) {
            if (keep[i]) {
                scale += y[i];
                kept++;
            }
        }
        scale /= Math.max(1, kept);
        double[][] a = new double[k][k];
        double[] b = new double[k];
        for (int i = 0; i < n; i++) {
            if (!keep[i]) {
                continue;
            }
            double w = (scale / y[i]) * (scale / y[i]);
            double[] r = x[i];
            for (int p = 0; p < k; p++) {
                double wp = w * r[p];
                if (wp == 0) {
                    continue;
                }
                b[p] += wp * y[i];
                for (int q = p; q < k; q++) {
                    a[p][q] += wp * r[q];
                }
            }
        }
        for (int p = 0; p < k; p++) {
            for (int q = 0; q < p; q++) {
                a[p][q] = a[q][p];
            }
        }
        double trace = 0;
        for (int p = 0; p < k; p++) {
            trace += a[p][p];
        }
        for (int p = 0; p < k; p++) {
            a[p][p] += RIDGE * trace / k + 1e-12;
        }
        try {
            RealMatrix m = new Array2DRowRealMatrix(a, false);
            return new CholeskyDecomposition(m, 1e-12, 1e-14).getSolver().solve(new ArrayRealVector(b, false)).toArray();
        } catch (NonPositiveDefiniteMatrixException | org.apache.commons.math3.linear.SingularMatrixException
                 | org.apache.commons.math3.linear.NonSymmetricMatrixException e) {
            return null;
        }
    }
}
