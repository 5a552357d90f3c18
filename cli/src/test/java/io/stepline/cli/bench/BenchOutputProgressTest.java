package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The steady rate of a stage: records per second over the second half of its output. */
class BenchOutputProgressTest {
    @Test
    void theSecondHalfIsTimedFromTheFirstPollPastHalfToTheLast() {
        // first output at 1 s, 520 of 1,000 records at 3 s, 1,000 at 5 s: 480 records in 2 s
        var p = new StageWatch.OutputProgress(1_000_000_000L, 3_000_000_000L, 520, 5_000_000_000L, 1_000);
        assertThat(p.steadyPerS()).isEqualTo(240.0);
    }

    @Test
    void outputThatCameInOnePollHasNoSteadyRate() {
        var p = new StageWatch.OutputProgress(2_000_000_000L, 2_000_000_000L, 1_000, 2_000_000_000L, 1_000);
        assertThat(p.steadyPerS()).isNaN();
    }
}
