package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import io.stepline.roofline.retention.RetentionStats;

/**
 * One task's kernel batches that arrived before their step was judged, in a changelogged store
 * (value = 8-byte arrival time + the encoded batch). Owns this task's share of the
 * {@link RetentionStats#waitingBatches}/{@link RetentionStats#waitingBytes} gauges, which several
 * tasks of one application add to: {@link #release()} takes the share back when the task closes,
 * so a task that migrates (or is restored again) does not count its batches twice.
 */
final class WaitingBatches {
    private final KeyValueStore<String, byte[]> store;
    private final RetentionStats stats;
    /**
     * Waiting batches in arrival order, so that expiry looks at the oldest few instead of scanning
     * the store every second (a fast replay can park hundreds of MB there). Entries whose batch was
     * taken meanwhile are skipped when they reach the head.
     */
    private final ArrayDeque<Arrival> arrivals = new ArrayDeque<>();
    /** This task's share of the gauges. */
    private long batches;
    private long bytes;

    private record Arrival(long arrivalMs, String key) { }

    WaitingBatches(KeyValueStore<String, byte[]> store, RetentionStats stats) {
        this.store = store;
        this.stats = stats;
    }

    /** Counts what the store holds (restored from the changelog) into the gauges and the expiry queue. */
    void restore() {
        List<Arrival> restored = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                add(kv.value.length - 8);
                restored.add(new Arrival(ByteBuffer.wrap(kv.value).getLong(), kv.key));
            }
        }
        restored.sort(Comparator.comparingLong(Arrival::arrivalMs));
        arrivals.addAll(restored);
    }

    long bytes() {
        return bytes;
    }

    long batches() {
        return batches;
    }

    void park(String inst, long stepId, int rank, byte[] batch, long nowMs) {
        String key = stepKey(inst, stepId) + rank;
        store.put(key, ByteBuffer.allocate(8 + batch.length).putLong(nowMs).put(batch).array());
        arrivals.addLast(new Arrival(nowMs, key));
        add(batch.length);
    }

    /** Removes and returns the encoded batches (all ranks) waiting for this step. */
    List<byte[]> take(String inst, long stepId) {
        if (batches == 0) {
            return List.of();
        }
        List<String> keys = new ArrayList<>();
        List<byte[]> taken = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(stepKey(inst, stepId), Serdes.String().serializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                byte[] raw = Arrays.copyOfRange(kv.value, 8, kv.value.length);
                taken.add(raw);
                keys.add(kv.key);
                add(-1, -raw.length);
            }
        }
        keys.forEach(store::delete);
        return taken;
    }

    /** Drops the batches that have waited at least {@code maxAgeMs}, counting them as expired. */
    void expire(long nowMs, long maxAgeMs) {
        while (!arrivals.isEmpty() && nowMs - arrivals.peekFirst().arrivalMs() >= maxAgeMs) {
            Arrival w = arrivals.pollFirst();
            byte[] v = store.get(w.key());
            // taken already, or the same key parked again later (a duplicate batch): not this entry's to expire
            if (v == null || ByteBuffer.wrap(v).getLong() != w.arrivalMs()) {
                continue;
            }
            store.delete(w.key());
            long size = v.length - 8;
            stats.expiredBatches.increment();
            stats.expiredBytes.add(size);
            add(-1, -size);
        }
        if (batches == 0) {
            arrivals.clear(); // everything was taken: the rest of the queue is stale
        }
    }

    /** Takes this task's share out of the gauges (the batches stay in the store for whoever owns the task next). */
    void release() {
        stats.waitingBatches.add(-batches);
        stats.waitingBytes.add(-bytes);
        batches = 0;
        bytes = 0;
        arrivals.clear();
    }

    private void add(long size) {
        add(1, size);
    }

    private void add(long count, long size) {
        batches += count;
        bytes += size;
        stats.waitingBatches.add(count);
        stats.waitingBytes.add(size);
    }

    private static String stepKey(String inst, long stepId) {
        // zero-padded step id keeps one step's ranks together for the prefix scan
        String id = Long.toString(stepId);
        return "k|" + inst + "|" + "0".repeat(Math.max(0, 19 - id.length())) + id + "|";
    }
}
