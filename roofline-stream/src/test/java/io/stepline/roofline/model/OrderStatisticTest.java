package io.stepline.roofline.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class OrderStatisticTest {
    @Test
    void everyRankMatchesTheSortedArrayBitForBit() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int round = 0; round < 600; round++) {
            int n = 1 + rnd.nextInt(600);
            double[] a = new double[n];
            int shape = round % 6;
            for (int i = 0; i < n; i++) {
                a[i] = switch (shape) {
                    case 0 -> rnd.nextGaussian();
                    case 1 -> rnd.nextInt(4);                       // many ties
                    case 2 -> i;                                    // already sorted
                    case 3 -> Math.abs(i - n / 2);                  // V-shaped: deviations from a median
                    case 4 -> n - i;                                // reversed
                    default -> rnd.nextInt(10) == 0 ? Double.NaN : (rnd.nextBoolean() ? -0.0 : 0.0); // NaN and signed zeros
                };
            }
            double[] sorted = a.clone();
            Arrays.sort(sorted);
            int k = rnd.nextInt(n);
            double[] copy = a.clone();
            double got = OrderStatistic.kth(copy, n, k);
            assertThat(copy).as("left as it was").isEqualTo(a);
            assertThat(Double.doubleToRawLongBits(got)).as("round %d, n %d, k %d", round, n, k)
                    .isEqualTo(Double.doubleToRawLongBits(sorted[k]));
        }
    }

    @Test
    void onlyThePrefixCounts() {
        double[] a = {5, 1, 4, -100, -200};
        assertThat(OrderStatistic.kth(a, 3, 1)).isEqualTo(4.0);
        assertThat(OrderStatistic.kth(a, 3, 0)).isEqualTo(1.0);
    }

    @Test
    void aRankOutsideTheValuesIsRefused() {
        assertThatThrownBy(() -> OrderStatistic.kth(new double[3], 3, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OrderStatistic.kth(new double[3], 4, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OrderStatistic.kth(new double[0], 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
