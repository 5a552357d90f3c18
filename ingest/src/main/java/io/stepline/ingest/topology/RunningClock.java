package io.stepline.ingest.topology;

/**
 * The time the assembler's waits are measured in: Kafka Streams' wall-clock time while the
 * processor runs, where a stall (a long GC pause, a commit blocked on the broker, a rebalance
 * hiccup) counts as at most {@code maxGapMs}. After a stall Kafka Streams may run the wall-clock
 * punctuator before it processes the records that arrived meanwhile; counting the stall in full
 * would expire steps whose phases or successors are already in its buffer. A healthy stream
 * thread observes the clock at every record and at least every punctuation interval, so the cap
 * never shortens a wait that was spent running. Starts at the wall clock, so arrival times kept
 * in the store by an earlier run of the task are in the past.
 */
final class RunningClock {
    private final long maxGapMs;
    private long running;
    private long lastWallMs;

    RunningClock(long wallNowMs, long maxGapMs) {
        if (maxGapMs < 1) {
            throw new IllegalArgumentException("maxGapMs must be >= 1");
        }
        this.maxGapMs = maxGapMs;
        this.running = wallNowMs;
        this.lastWallMs = wallNowMs;
    }

    /** The running time at wall-clock time {@code wallNowMs} (never goes back). */
    long at(long wallNowMs) {
        long gap = wallNowMs - lastWallMs;
        if (gap > 0) {
            running += Math.min(gap, maxGapMs);
            lastWallMs = wallNowMs;
        }
        return running;
    }
}
