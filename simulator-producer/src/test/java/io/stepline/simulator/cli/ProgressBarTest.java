package io.stepline.simulator.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProgressBarTest {
    @Test
    void showsTheShareOfSimulatedTimeStepsAndStepsPerWallSecond() {
        ProgressBar bar = new ProgressBar(240, 10, 1_000_000_000L);
        String line = bar.line(60, 250_000, 3_000_000_000L);
        assertThat(line).startsWith("\r[###.......]  25%");
        assertThat(line).contains("simulated   60.0 / 240 s").contains("250,000 steps").contains("125,000 steps/s");
    }

    @Test
    void staysWithinItsBoundsAtTheEndsOfTheRun() {
        ProgressBar bar = new ProgressBar(10, 4, 0);
        assertThat(bar.line(0, 0, 0)).startsWith("\r[....]   0%").contains(" 0 steps/s");
        assertThat(bar.line(10.2, 99, 1_000_000_000L)).startsWith("\r[####] 100%");
    }

    @Test
    void refusesADurationThatIsNotPositive() {
        assertThatThrownBy(() -> new ProgressBar(0, 10, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
