package io.stepline.simulator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class FixedDecimalTest {

    private static String big(double v, int scale) {
        return BigDecimal.valueOf(v).setScale(scale, RoundingMode.HALF_UP).toPlainString();
    }

    @Test
    void matchesBigDecimalHalfUpOnRandomAndEdgeValues() {
        double[] edges = {0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.00005, 0.00015, 0.12345, 0.99995, -0.00004, -1.23456, 1234.5678905,
                123456789.123456789, 1e12 + 0.5, 0.30000000000000004, 1e-9, 7.0000005};
        for (int scale : new int[] {0, 4, 6}) {
            for (double v : edges) {
                assertThat(FixedDecimal.format(v, scale)).as("%s at scale %d", v, scale).isEqualTo(big(v, scale));
            }
        }
        SplittableRandom rng = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            double v = switch (i % 4) {
                case 0 -> rng.nextDouble();                       // ratios
                case 1 -> rng.nextDouble() * 2000;                // seconds
                case 2 -> Math.round(rng.nextDouble() * 1e7) / 1e5 + 0.000005; // near ties at scale 4 and 6
                default -> (rng.nextDouble() - 0.5) * 1e6;
            };
            int scale = i % 2 == 0 ? 4 : 6;
            assertThat(FixedDecimal.format(v, scale)).as("%s at scale %d", v, scale).isEqualTo(big(v, scale));
        }
    }

    @Test
    void refusesScalesItCannotWrite() {
        assertThatThrownBy(() -> FixedDecimal.format(1, 9)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scale");
    }
}
