package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The steady rate of a stage: records per second over the second half of its output, after a warm-up's output or not. */
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

    private static final long SECOND = 1_000_000_000L;

    @Test
    void withoutAWarmUpTheStageIsTimedFromItsFirstOutput() {
        StageWatch.ProgressTracker t = new StageWatch.ProgressTracker(0, 1_000);
        t.observe(1 * SECOND, 0);
        t.observe(2 * SECOND, 300);
        t.observe(3 * SECOND, 600);
        assertThat(t.done()).isFalse();
        t.observe(4 * SECOND, 1_000);
        assertThat(t.done()).isTrue();
        StageWatch.OutputProgress p = t.progress();
        assertThat(p.seconds()).isEqualTo(2.0);
        assertThat(p.steadyPerS()).isEqualTo(400.0);
    }

    @Test
    void theWarmUpsOutputIsNeitherTimedNorCountedTowardsTheMeasuredHalf() {
        // 10,000 warm-up records, then 1,000 measured: the first 10,000 come in 20 s of compiling, the rest at 500/s
        StageWatch.ProgressTracker t = new StageWatch.ProgressTracker(10_000, 1_000);
        long now = 0;
        for (long records = 0; records <= 10_000; records += 500) {
            now += SECOND;
            t.observe(now, records);
            assertThat(t.done()).as("%d records", records).isFalse();
        }
        long measuredFrom = now;
        t.observe(now += SECOND, 10_500);
        t.observe(now += SECOND, 11_000);
        assertThat(t.done()).isTrue();
        StageWatch.OutputProgress p = t.progress();
        assertThat(p.firstNs()).as("the first poll past the warm-up").isEqualTo(measuredFrom + SECOND);
        assertThat(p.halfRecords()).isEqualTo(10_500);
        assertThat(p.seconds()).isEqualTo(1.0);
        assertThat(p.steadyPerS()).isEqualTo(500.0);
    }

    @Test
    void markersMayCarryTheSumSlightlyShortOfTheTotal() {
        StageWatch.ProgressTracker t = new StageWatch.ProgressTracker(5_000, 5_000);
        t.observe(SECOND, 9_989);
        assertThat(t.done()).isFalse();
        t.observe(2 * SECOND, 9_990);
        assertThat(t.done()).as("99.9% of warm-up and measured together").isTrue();
    }

    @Test
    void aNegativeWarmUpOrNothingToWaitForIsRefused() {
        assertThatThrownBy(() -> new StageWatch.ProgressTracker(-1, 10)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> new StageWatch.ProgressTracker(0, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 0");
    }

    @Test
    void theBacklogIsHowFarTheOutputFellBehindItsInputOnceMeasured() {
        StageWatch.ProgressTracker t = new StageWatch.ProgressTracker(1_000, 1_000);
        t.observe(SECOND, 500, 1_900); // still the warm-up's output: not measured
        t.observe(2 * SECOND, 1_200, 1_800);
        t.observe(3 * SECOND, 1_700, 2_000);
        t.observe(4 * SECOND, 2_000, 2_000);
        assertThat(t.progress().maxBacklog()).isEqualTo(600);
        StageWatch.ProgressTracker alone = new StageWatch.ProgressTracker(0, 10);
        alone.observe(SECOND, 10);
        assertThat(alone.progress().maxBacklog()).as("no input watched").isEqualTo(-1);
        StageWatch.ProgressTracker ahead = new StageWatch.ProgressTracker(0, 10);
        ahead.observe(SECOND, 10, 9); // the input's markers may count less than the output's
        assertThat(ahead.progress().maxBacklog()).isZero();
    }
}
