package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class TrimmedLeastSquaresTest {

    @Test
    void recoversTheCostWhenOneStepInTenIsAFault() {
        SplittableRandom rng = new SplittableRandom(4);
        double[] truth = {2e6, 1e6, 8e6, 0, 0, 0, 3e6, 0.05e6, 0.5e6};
        int n = 600;
        double[][] x = new double[n][CostBasis.SIZE];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            boolean prefill = rng.nextDouble() < 0.4;
            double p = prefill ? rng.nextInt(16, 2048) : 0;
            double d = rng.nextInt(1, 120);
            CostBasis.of(p, prefill ? 1 : 0, d, d, d * rng.nextInt(200, 3000), x[i]);
            y[i] = CostBasis.dot(truth, x[i]) * Math.exp(rng.nextGaussian() * 0.02) * (i % 10 == 0 ? 2.5 : 1);
        }
        double[] fit = TrimmedLeastSquares.fit(x, y, n, TrimmedLeastSquares.DEFAULT_TRIM);
        double[] untrimmed = TrimmedLeastSquares.fit(x, y, n, 0);
        double trimmedError = 0;
        double untrimmedError = 0;
        for (int i = 0; i < n; i++) {
            double clean = CostBasis.dot(truth, x[i]);
            trimmedError += Math.abs(CostBasis.dot(fit, x[i]) / clean - 1) / n;
            untrimmedError += Math.abs(CostBasis.dot(untrimmed, x[i]) / clean - 1) / n;
        }
        assertThat(trimmedError).as("mean relative error of the trimmed fit").isLessThan(0.01).isLessThan(untrimmedError / 2);
    }

    @Test
    void featuresThatNeverVaryStillGiveAFit() {
        int n = 50;
        double[][] x = new double[n][CostBasis.SIZE];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            CostBasis.of(0, 0, 10 + i, 10 + i, 0, x[i]); // decode only, no context: four columns all zero
            y[i] = 5e6 + 1e5 * (10 + i);
        }
        double[] fit = TrimmedLeastSquares.fit(x, y, n, 0.1);
        assertThat(fit).isNotNull();
        double[] probe = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 30, 30, 0, probe);
        assertThat(CostBasis.dot(fit, probe)).isCloseTo(8e6, within(8e6 * 0.01));
        assertThat(TrimmedLeastSquares.fit(x, y, CostBasis.SIZE - 1, 0.1)).as("fewer points than features").isNull();
    }
}
