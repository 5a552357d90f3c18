package io.stepline.roofline.model.robust;

import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.CholeskyDecomposition;
import org.apache.commons.math3.linear.NonPositiveDefiniteMatrixException;
import org.apache.commons.math3.linear.RealMatrix;

/**
 * Least squares on relative error (each point weighted by 1 / latency squared, so a 5 ms step
 * counts as much as a 500 ms one), with a small ridge penalty (features that do not vary, or vary
 * together, get a defined fit) and no negative cost ({@link CostBasis#isCost}), refitted without the
 * points it explains worst: a fault inside the training data pulls the first fit, the trimmed refit
 * no longer sees it.
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
        return nonNegative(a, b);
    }

    /**
     * The normal equations {@code a c = b} solved with every coefficient {@link CostBasis#isCost} kept at or above 0:
     * Lawson and Hanson's active set, the hinges always free. Where the unconstrained solution has no negative cost, it
     * is that solution.
     */
    private static double[] nonNegative(double[][] a, double[] b) {
        int k = b.length;
        boolean[] passive = new boolean[k];
        for (int j = 0; j < k; j++) {
            passive[j] = !CostBasis.isCost(j);
        }
        double[] c = solveOn(a, b, passive);
        if (c == null) {
            return null;
        }
        // each pass frees one cost, or ends: at most as many passes as features, twice over for the costs fixed again
        for (int pass = 0; pass < 3 * k; pass++) {
            int enter = -1;
            double steepest = 0;
            for (int j = 0; j < k; j++) {
                if (passive[j]) {
                    continue;
                }
                double gradient = b[j];
                for (int q = 0; q < k; q++) {
                    gradient -= a[j][q] * c[q];
                }
                // per unit of the feature's own scale, so that a feature in large units does not always enter first; a
                // gradient within rounding of 0 frees nothing
                double scaled = gradient / Math.sqrt(a[j][j]);
                if (scaled > steepest + 1e-12 * Math.sqrt(Math.abs(b[j]) + 1)) {
                    steepest = scaled;
                    enter = j;
                }
            }
            if (enter < 0) {
                return c;
            }
            passive[enter] = true;
            for (int inner = 0; inner < 3 * k; inner++) {
                double[] z = solveOn(a, b, passive);
                if (z == null) {
                    return c;
                }
                double step = 1;
                for (int j = 0; j < k; j++) {
                    if (passive[j] && CostBasis.isCost(j) && z[j] <= 0) {
                        step = Math.min(step, c[j] / (c[j] - z[j]));
                    }
                }
                if (step >= 1) {
                    c = z;
                    break;
                }
                // move towards z as far as the costs stay non-negative; those that reach 0 (to rounding) are fixed there again
                for (int j = 0; j < k; j++) {
                    c[j] += step * (z[j] - c[j]);
                    if (passive[j] && CostBasis.isCost(j) && c[j] <= 1e-12 * Math.abs(z[j] - c[j])) {
                        passive[j] = false;
                        c[j] = 0;
                    }
                }
            }
        }
        return c;
    }

    /** Solves {@code a c = b} over the features marked free, the others held at 0; null when that system is singular. */
    private static double[] solveOn(double[][] a, double[] b, boolean[] free) {
        int k = b.length;
        int[] idx = new int[k];
        int m = 0;
        for (int j = 0; j < k; j++) {
            if (free[j]) {
                idx[m++] = j;
            }
        }
        double[] c = new double[k];
        if (m == 0) {
            return c;
        }
        double[][] sub = new double[m][m];
        double[] rhs = new double[m];
        for (int r = 0; r < m; r++) {
            rhs[r] = b[idx[r]];
            for (int q = 0; q < m; q++) {
                sub[r][q] = a[idx[r]][idx[q]];
            }
        }
        try {
            RealMatrix mat = new Array2DRowRealMatrix(sub, false);
            double[] s = new CholeskyDecomposition(mat, 1e-12, 1e-14).getSolver().solve(new ArrayRealVector(rhs, false)).toArray();
            for (int r = 0; r < m; r++) {
                c[idx[r]] = s[r];
            }
            return c;
        } catch (NonPositiveDefiniteMatrixException | org.apache.commons.math3.linear.SingularMatrixException
                 | org.apache.commons.math3.linear.NonSymmetricMatrixException e) {
            return null;
        }
    }
}
