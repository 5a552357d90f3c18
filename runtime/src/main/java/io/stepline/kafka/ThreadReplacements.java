package io.stepline.kafka;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * How a stage answers a stream thread that died: replaced, a few times in a while, then the client shut
 * down. A thread killed by the cluster (its transaction aborted behind its back while a broker restarted:
 * {@code InvalidTxnStateException} on Apache Kafka's own broker) is replaced, and under exactly-once the new
 * thread takes its tasks back from their last commit; one that dies again and again has met something a new
 * thread will not get past, and the stage stops (its command then exits non-zero, for a supervisor to see).
 */
public final class ThreadReplacements {
    /** Threads replaced within {@link #DEFAULT_WINDOW} before the client is shut down instead. */
    public static final int DEFAULT_MAX = 3;
    /** The window the replacements are counted over. */
    public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(10);

    private final int max;
    private final long windowNs;
    private final Deque<Long> recent = new ArrayDeque<>();

    public ThreadReplacements() {
        this(DEFAULT_MAX, DEFAULT_WINDOW);
    }

    public ThreadReplacements(int max, Duration window) {
        if (max < 0 || window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("replacements must be >= 0 and the window > 0, got " + max + ", " + window);
        }
        this.max = max;
        this.windowNs = window.toNanos();
    }

    /** A thread died at {@code nowNs} (System.nanoTime): whether to replace it (else the client shuts down). */
    public synchronized boolean replace(long nowNs) {
        while (!recent.isEmpty() && nowNs - recent.peekFirst() >= windowNs) {
            recent.pollFirst();
        }
        if (recent.size() >= max) {
            return false;
        }
        recent.addLast(nowNs);
        return true;
    }

    /** Replacements within the window so far. */
    public synchronized int inWindow() {
        return recent.size();
    }

    public int max() {
        return max;
    }
}
