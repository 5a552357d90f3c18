package io.stepline.reports.service;

import java.util.Iterator;
import java.util.Map;
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
 *
 * <p>An anomaly that never comes (its record skipped as undecodable) must not hold the mark for ever. It used to be
 * given up after a thousand more verdicts of the instance were read; but the detector writes an instance's verdicts
 * many to a record, and a transaction of a detector catching up on a backlog carries thousands of them, so the
 * anomalies of the very transaction whose marker was still on its way were given up before it came (a run whose
 * 1,563 flagged steps of one instance became 533 incidents, where the same input gives 15). An anomaly is given up
 * only once two read-through snapshots taken after its verdict was read have been reached ({@link
 * #giveUp}: the first may have been taken between the transaction's markers, the second was asked for after the
 * first was reached) and {@link #GIVE_UP_AFTER_MS} have passed since: a transaction's markers are written within
 * milliseconds of each other, so what is still missing then was skipped.
 */
final class AwaitedAnomalies {
    /**
     * Anomalies read ahead of their verdicts kept at most (the anomalies topic is small and may be read far ahead of
     * the verdicts); the oldest is let go first, as the reporter itself lets go of anomalies read far ahead.
     */
    static final int MAX_EARLY = 4096;
    /** Wall time after its verdict before an anomaly not read is taken as never coming (with two snapshots reached). */
    static final long GIVE_UP_AFTER_MS = 2_000;

    /** A step waiting for its anomaly: the snapshots taken before its verdict was read, and when that was. */
    private record Wait(long snapshotsTaken, long sinceMs) {}

    /** Steps judged OUTLIER without their anomaly yet. */
    private final TreeMap<Long, Wait> awaited = new TreeMap<>();
    /** Steps whose OUTLIER anomaly was read before their verdict. */
    private final TreeSet<Long> early = new TreeSet<>();

    /**
     * An OUTLIER verdict of {@code step} was read, so an anomaly of the step exists. {@code snapshotsTaken}:
     * read-through snapshots asked for so far; {@code nowMs}: the wall clock.
     */
    void outlier(long step, long snapshotsTaken, long nowMs) {
        if (!early.remove(step)) {
            awaited.putIfAbsent(step, new Wait(snapshotsTaken, nowMs));
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

    /**
     * The snapshot numbered {@code reached} (the first taken is 1) has been reached at {@code nowMs}: anomalies awaited
     * since before two snapshots were taken, for at least {@link #GIVE_UP_AFTER_MS}, are taken as never coming.
     * Returns whether one was.
     */
    boolean giveUp(long reached, long nowMs) {
        boolean any = false;
        for (Iterator<Map.Entry<Long, Wait>> it = awaited.entrySet().iterator(); it.hasNext(); ) {
            Wait w = it.next().getValue();
            if (reached >= w.snapshotsTaken() + 2 && nowMs - w.sinceMs() >= GIVE_UP_AFTER_MS) {
                it.remove();
                any = true;
            }
        }
        return any;
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
