package io.stepline.reports.service;

import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One instance's steps judged OUTLIER whose anomaly has not been read yet: the read-through must not pass them.
 *
 * <p>The detector commits a step's verdict and its anomaly in one transaction, but the broker writes the
 * transaction's commit marker to each of its partitions in turn. In between, a {@code read_committed} consumer
 * can read the verdict while the last stable offset of the anomalies partition still lies before the anomaly, and
 * a read-through taken then (the verdicts read, the anomalies partition read to that offset) passes a step whose
 * anomaly comes after it: each such anomaly became an incident of its own (one {@code stepline run} in about 45:
 * 191 incidents where the same input gave 103, docs/BENCHMARKS.md). An OUTLIER verdict says that an anomaly of
 * its step exists, so the mark stays below the first one not read.
 */
final class AwaitedAnomalies {
    /**
     * Anomalies read ahead of their verdicts kept at most (the anomalies topic is small and may be read far ahead of
     * the verdicts); the oldest is let go first, as the reporter itself lets go of anomalies read far ahead.
     */
    static final int MAX_EARLY = 4096;

    private final int skipAfter;
    /** Steps judged OUTLIER without their anomaly yet, and how many verdicts had been read when each began to wait. */
    private final TreeMap<Long, Long> awaited = new TreeMap<>();
    /** Steps whose OUTLIER anomaly was read before their verdict. */
    private final TreeSet<Long> early = new TreeSet<>();
    private long verdictsRead;

    /** {@code skipAfter}: verdicts read after an awaited step after which its anomaly is taken as never coming. */
    AwaitedAnomalies(int skipAfter) {
        if (skipAfter < 1) {
            throw new IllegalArgumentException("skipAfter must be >= 1, got " + skipAfter);
        }
        this.skipAfter = skipAfter;
    }

    /** A verdict of {@code step} was read; {@code outlier}: it was OUTLIER, so an anomaly of the step exists. */
    void verdict(long step, boolean outlier) {
        verdictsRead++;
        if (outlier && !early.remove(step)) {
            awaited.put(step, verdictsRead);
        }
        // an anomaly that never comes (skipped as undecodable) holds the mark back for skipAfter verdicts, as a missing verdict does
        while (!awaited.isEmpty() && verdictsRead - awaited.firstEntry().getValue() >= skipAfter) {
            awaited.pollFirstEntry();
        }
    }

    /** An OUTLIER anomaly of {@code step} was read. */
    void anomaly(long step) {
        if (awaited.remove(step) == null) {
            early.add(step);
            if (early.size() > MAX_EARLY) {
                early.pollFirst();
            }
        }
    }

    /** {@code mark}, or the step before the first awaited anomaly if that is lower. */
    long cap(long mark) {
        return awaited.isEmpty() ? mark : Math.min(mark, awaited.firstKey() - 1);
    }

    /** Partitions were revoked: what is read again rebuilds it. */
    void clear() {
        awaited.clear();
        early.clear();
    }
}
