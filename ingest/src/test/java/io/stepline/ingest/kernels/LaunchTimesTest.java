package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LaunchTimesTest {
    @Test
    void keepsEveryLaunchThroughGrowthAndAnswersNoneForUnknownIds() {
        LaunchTimes t = new LaunchTimes();
        int n = 50_000;
        for (int i = 0; i < n; i++) {
            // sequential ids as CUPTI assigns them, and some far apart
            t.put(i, 1_000L * i);
            t.put(Long.MAX_VALUE - i, -i);
        }
        assertThat(t.size()).isEqualTo(2 * n);
        for (int i = 0; i < n; i++) {
            assertThat(t.get(i)).isEqualTo(1_000L * i);
            assertThat(t.get(Long.MAX_VALUE - i)).isEqualTo(-i);
        }
        assertThat(t.get(n)).isEqualTo(LaunchTimes.NONE);
        assertThat(t.get(-1)).isEqualTo(LaunchTimes.NONE);
        assertThat(t.get(LaunchTimes.NONE)).isEqualTo(LaunchTimes.NONE);
        t.put(7, 42);
        assertThat(t.get(7)).isEqualTo(42);
        assertThat(t.size()).isEqualTo(2 * n);
        assertThatThrownBy(() -> t.put(LaunchTimes.NONE, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
