package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The latency reader's failures reach the harness; its histogram is read only once it has stopped. */
class LatencyProbeTest {
    @Test
    void aReaderThatFailsFailsTheProbe() {
        LatencyProbe p = new LatencyProbe((done, sample) -> {
            throw new IllegalStateException("broker gone");
        });
        assertThatThrownBy(p::finish).isInstanceOf(IllegalStateException.class).hasMessageContaining("latency reader failed")
                .hasRootCauseMessage("broker gone");
    }

    @Test
    void noSampleIsAFailureNotALatencyOfZero() {
        LatencyProbe p = new LatencyProbe((done, sample) -> {
            while (!done.getAsBoolean()) {
                Thread.onSpinWait();
            }
        });
        assertThatThrownBy(p::finish).isInstanceOf(IllegalStateException.class).hasMessageContaining("no output record");
    }

    @Test
    void everySampleTakenUntilStopIsInTheHistogram() throws Exception {
        LatencyProbe p = new LatencyProbe((done, sample) -> {
            sample.accept(5_000_000L);
            sample.accept(7_000_000L);
            while (!done.getAsBoolean()) {
                Thread.onSpinWait();
            }
            sample.accept(9_000_000L); // taken after the stop was asked, before the reader ended: counted
        });
        Histogram h = p.finish();
        assertThat(h.getTotalCount()).isEqualTo(3);
        assertThat(h.getValueAtPercentile(50) / 1e6).isCloseTo(7.0, org.assertj.core.data.Offset.offset(0.01));
    }

    @Test
    void theDrainWaitsForTheLastLateRecordAndGivesUpAtItsLimit() throws Exception {
        // output that goes on arriving well after the load stopped (a stage behind it): the drain takes it all
        java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
        LatencyProbe late = new LatencyProbe((done, sample) -> {
            for (int i = 0; i < 40; i++) {
                sample.accept(1_000_000L * i);
                taken.incrementAndGet();
                Thread.sleep(10);
            }
            while (!done.getAsBoolean()) {
                Thread.onSpinWait();
            }
        });
        assertThat(late.awaitQuiet(java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(30))).isTrue();
        assertThat(taken.get()).as("quiet only once the last record was read").isEqualTo(40);
        assertThat(late.finish().getTotalCount()).isEqualTo(40);

        // output that never stops: the drain gives up at its limit, and says so
        LatencyProbe endless = new LatencyProbe((done, sample) -> {
            while (!done.getAsBoolean()) {
                sample.accept(1_000_000L);
                Thread.sleep(5);
            }
        });
        assertThat(endless.awaitQuiet(java.time.Duration.ofMillis(300), java.time.Duration.ofMillis(1_500))).isFalse();
        endless.stop();
    }

    @Test
    void stopEndsTheReaderWhateverItRecordedAndLeavesAFailureToFinish() throws Exception {
        java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
        LatencyProbe running = new LatencyProbe((done, sample) -> {
            while (!done.getAsBoolean()) {
                Thread.onSpinWait();
            }
            ended.countDown();
        });
        running.stop(); // nothing recorded: finish would fail, stop does not
        assertThat(ended.getCount()).as("the reader returned").isZero();

        LatencyProbe failed = new LatencyProbe((done, sample) -> {
            throw new IllegalStateException("broker gone");
        });
        failed.stop();
        assertThatThrownBy(failed::finish).hasRootCauseMessage("broker gone");
    }
}
