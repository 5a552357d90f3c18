package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
    /**
     * Per instance, the steps with waiting batches and how many: the steps the lateness has passed are
     * found without scanning the store at every step. A count may run high (a batch parked twice under
     * one key); {@link #take} removes the step whatever its count.
     */
    private final Map<String, TreeMap<Long, Integer>> waitingSteps = new HashMap<>();
    /** This task's share of the gauges. */
    private long batches;
    private long bytes;

    private record Arrival(long arrivalMs, String key) { }

    /** A waiting batch taken out: its step and its encoded bytes. */
    record Taken(long stepId, byte[] batch) { }

    WaitingBatches(KeyValueStore<String, byte[]> store, RetentionStats stats) {
        this.store = store;
        this.stats = stats;
    }

    /** Counts what the store holds (restored from the changelog) into the gauges and the expiry queue. */
    void restore() {
        List<Arrival> restored = new ArrayList<>();
        // the waiting batches' keys only: the store also holds what JudgedSteps and BaselineSampler keep
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(KEY_PREFIX, Serdes.String().serializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                add(kv.value.length - 8);
                restored.add(new Arrival(ByteBuffer.wrap(kv.value).getLong(), kv.key));
                index(kv.key, 1);
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
        index(key, 1);
        add(batch.length);
    }

    /** Removes and returns the encoded batches (all ranks) waiting for this step. */
    List<byte[]> take(String inst, long stepId) {
        TreeMap<Long, Integer> waitingFor = waitingSteps.get(inst);
        if (waitingFor == null || !waitingFor.containsKey(stepId)) {
            return List.of(); // most steps: no store scan
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
        waitingFor.remove(stepId);
        if (waitingFor.isEmpty()) {
            waitingSteps.remove(inst);
        }
        return taken;
    }

    /** Removes and returns the batches of {@code inst} waiting for steps up to {@code maxStepId}, in step order. */
    List<Taken> takeThrough(String inst, long maxStepId) {
        TreeMap<Long, Integer> steps = waitingSteps.get(inst);
        if (steps == null || steps.firstKey() > maxStepId) {
            return List.of();
        }
        List<Taken> out = new ArrayList<>();
        for (Long stepId : new ArrayList<>(steps.headMap(maxStepId, true).keySet())) {
            for (byte[] raw : take(inst, stepId)) {
                out.add(new Taken(stepId, raw));
            }
        }
        return out;
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
            index(w.key(), -1);
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
        waitingSteps.clear();
    }

    /** Counts a waiting batch's key in or out of its instance's steps ({@code k|<instance>|<step>|<rank>}). */
    private void index(String key, int delta) {
        int rankAt = key.lastIndexOf('|');
        int stepAt = key.lastIndexOf('|', rankAt - 1);
        String inst = key.substring(2, stepAt);
        long stepId = Long.parseLong(key.substring(stepAt + 1, rankAt));
        TreeMap<Long, Integer> steps = waitingSteps.computeIfAbsent(inst, k -> new TreeMap<>());
        if (steps.merge(stepId, delta, Integer::sum) <= 0) {
            steps.remove(stepId);
        }
        if (steps.isEmpty()) {
            waitingSteps.remove(inst);
        }
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

    /** The waiting batches' keys: {@code k|<instance>|<step>|<rank>}. */
    private static final String KEY_PREFIX = "k|";

    private static String stepKey(String inst, long stepId) {
        // zero-padded step id keeps one step's ranks together for the prefix scan
        String id = Long.toString(stepId);
        return KEY_PREFIX + inst + "|" + "0".repeat(Math.max(0, 19 - id.length())) + id + "|";
    }
}
