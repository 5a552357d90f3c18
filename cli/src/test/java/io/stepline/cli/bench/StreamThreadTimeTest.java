package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The shares of a stage's stream threads' wall time between two samples of their counters. */
class StreamThreadTimeTest {
    private static final long S = 1_000_000_000L;

    @Test
    void sharesAreOfTheThreadsWallTimeAndCommitTimeIsPerCommit() {
        // two threads over 10 s: 20 thread-seconds; 11 s on a core, 6 s blocked (4 s of it committing), 3 s left
        StreamThreadTime.Sample from = new StreamThreadTime.Sample(5 * S, 2, 100 * S, 50.0 * S, 30.0 * S, 10.0 * S, 1000);
        StreamThreadTime.Sample to = new StreamThreadTime.Sample(15 * S, 2, 111 * S, 56.0 * S, 34.0 * S, 11.0 * S, 1500);
        StreamThreadTime.Split split = StreamThreadTime.between(from, to);
        assertThat(split.threads()).isEqualTo(2);
        assertThat(split.cpuShare()).isCloseTo(0.55, within(1e-9));
        assertThat(split.blockedShare()).isCloseTo(0.30, within(1e-9));
        assertThat(split.runnableShare()).isCloseTo(0.15, within(1e-9));
        assertThat(split.txnCommitShare()).isCloseTo(0.20, within(1e-9));
        assertThat(split.pollWaitShare()).isCloseTo(0.05, within(1e-9));
        assertThat(split.txnCommitMsAvg()).as("4 s over 500 commits").isCloseTo(8.0, within(1e-9));
        assertThat(split.commitsPerThreadPerS()).as("500 commits in 10 s by two threads").isCloseTo(25.0, within(1e-9));
    }

    @Test
    void aStretchWithoutCommitsOrThreadsHasNoCommitTimeOrNoSplit() {
        StreamThreadTime.Sample from = new StreamThreadTime.Sample(0, 1, 0, 0, 0, 0, 7);
        StreamThreadTime.Sample to = new StreamThreadTime.Sample(S, 1, S, 0.5 * S, 0, 0, 7);
        StreamThreadTime.Split split = StreamThreadTime.between(from, to);
        assertThat(split.txnCommitMsAvg()).isZero();
        // CPU and blocked time counted by different clocks may overlap: nothing is left, not less than nothing
        assertThat(split.runnableShare()).isZero();
        assertThat(StreamThreadTime.between(new StreamThreadTime.Sample(0, 0, 0, 0, 0, 0, 0), new StreamThreadTime.Sample(S, 0, 0, 0, 0, 0, 0)))
                .isNull();
    }

    @Test
    void aStageStreamThreadsAreTheThreadsNamedAfterItsApplicationId() {
        String app = "bench-ingest";
        assertThat(StreamThreadTime.isStreamThread("bench-ingest-3f2a9c1e-55d2-4c1a-9c1e-0d2f3a4b5c6d-StreamThread-1", app)).isTrue();
        assertThat(StreamThreadTime.isStreamThread("bench-ingest-3f2a9c1e-55d2-4c1a-9c1e-0d2f3a4b5c6d-StateUpdater-1", app)).isFalse();
        assertThat(StreamThreadTime.isStreamThread("bench-roofline-3f2a9c1e-StreamThread-1", app)).isFalse();
        assertThat(StreamThreadTime.isStreamThread("kafka-producer-network-thread | bench-ingest-StreamThread-1-producer", app)).isFalse();
    }
}
