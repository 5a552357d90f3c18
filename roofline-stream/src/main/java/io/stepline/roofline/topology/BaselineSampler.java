package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Which NORMAL steps' kernel batches are kept as baselines for the reports, decided when the step is
 * judged, in the order of the steps topic: a deterministic sample of step ids (a replay keeps the
 * same baseline steps), and the first normal step of each instance in each {@link #BASELINE_PERIOD_NS}
 * of step time, so slow instances get baselines too. The period's state is in the task's pending store
 * (changelogged), so a restarted detector picks the same steps as one that ran through; decided by the
 * kernel batches as they arrived, it depended on the order the two topics were read in.
 */
final class BaselineSampler {
    /** At least one baseline step per instance in each such period of step time (its batches: one per rank). */
    static final long BASELINE_PERIOD_NS = 5_000_000_000L;

    private final double sampleRate;
    private final KeyValueStore<String, byte[]> store;
    /** Per instance: the period of the last periodic baseline step (read from the store on first use). */
    private final Map<String, Long> lastPeriod = new HashMap<>();

    BaselineSampler(double sampleRate, KeyValueStore<String, byte[]> store) {
        this.sampleRate = sampleRate;
        this.store = store;
    }

    /** Whether the batches of this NORMAL step are kept as a baseline. */
    boolean keep(String inst, long stepId, long startUnixNano) {
        if (sampleRate <= 0) {
            return false;
        }
        return sampled(inst, stepId) || periodic(inst, startUnixNano);
    }

    private boolean periodic(String inst, long startUnixNano) {
        long period = Math.floorDiv(startUnixNano, BASELINE_PERIOD_NS);
        Long last = lastPeriod.computeIfAbsent(inst, i -> {
            byte[] kept = store.get(key(i));
            return kept == null ? null : ByteBuffer.wrap(kept).getLong();
        });
        if (last != null && period <= last) {
            return false;
        }
        lastPeriod.put(inst, period);
        store.put(key(inst), ByteBuffer.allocate(8).putLong(period).array());
        return true;
    }

    private boolean sampled(String inst, long stepId) {
        long h = (inst.hashCode() * 0x9E3779B97F4A7C15L) ^ (stepId * 0xC2B2AE3D27D4EB4FL);
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        return (h >>> 11) * 0x1.0p-53 < sampleRate;
    }

    /** Apart from the waiting batches' {@code k|} and the kept steps' {@code r|} keys. */
    private static String key(String inst) {
        return "b|" + inst;
    }
}
