package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import io.stepline.events.Verdict;

/**
 * What kernel retention knows of one task's steps, per instance, within the kernel lateness
 * ({@link io.stepline.schemas.KernelLateness}): the highest step id seen, which steps of the window were
 * seen (judged, or come without a latency), and which were kept (outliers, and normal steps sampled as
 * baselines) with their verdict and ratio. A batch of a step at or below the highest minus the lateness
 * is late: whatever its step was, no batch of it is retained any more, so the retained batches of a
 * step are all written by the time the detector judges the step the lateness after it.
 *
 * <p>The kept steps are in the task's pending store, whose changelog restores them: a batch that comes
 * late is decided the same after a restart of the detector as without one. Which steps were seen is
 * held in memory only; after a restart a batch of a step seen before it and not kept waits until the
 * steps have passed it by the lateness and is dropped then, the same outcome a little later.
 */
final class JudgedSteps {
    /** What becomes of a kernel batch of a step, as far as its step is known. */
    enum Fate {
        /** Its step was kept: retain it. */
        KEPT,
        /** Its step was seen and not kept: drop it. */
        DROPPED,
        /** Its step lies the lateness or more behind the highest step seen: too late to be retained. */
        LATE,
        /** Its step has not been seen (or was seen before a restart and not kept): it waits. */
        UNKNOWN
    }

    /** A kept step: OUTLIER, or NORMAL for a baseline; the ratio its retained batches carry. */
    record Kept(Verdict verdict, double ratio) {
        boolean baseline() {
            return verdict != Verdict.OUTLIER;
        }

        byte[] encode() {
            return ByteBuffer.allocate(9).put((byte) verdict.ordinal()).putDouble(ratio).array();
        }

        static Kept decode(byte[] b) {
            ByteBuffer buf = ByteBuffer.wrap(b);
            return new Kept(Verdict.values()[buf.get()], buf.getDouble());
        }
    }

    private final KeyValueStore<String, byte[]> store;
    private final int lateness;
    private final Map<String, Window> windows = new HashMap<>();

    /** One instance: the highest step seen, the seen steps of the window as a ring of bits, and its kept steps. */
    private final class Window {
        final String instance;
        long head = -1;
        final long[] seen;
        final TreeMap<Long, Kept> kept = new TreeMap<>();

        Window(String instance) {
            this.instance = instance;
            this.seen = new long[Math.max(1, (lateness + 63) / 64)];
            String prefix = prefix(instance);
            try (KeyValueIterator<String, byte[]> it = store.prefixScan(prefix, Serdes.String().serializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    String step = kv.key.substring(prefix.length());
                    if (step.indexOf('|') < 0) { // not an instance whose id goes on with "|"
                        kept.put(Long.parseLong(step), Kept.decode(kv.value));
                    }
                }
            }
        }

        boolean late(long stepId) {
            return head >= 0 && stepId <= head - lateness;
        }

        void see(long stepId) {
            if (stepId > head) {
                long from = Math.max(head + 1, stepId - lateness + 1);
                if (stepId - from + 1 >= 64L * seen.length) {
                    java.util.Arrays.fill(seen, 0L);
                } else {
                    for (long s = from; s <= stepId; s++) {
                        clear(s); // ring slots last used by steps now out of the window
                    }
                }
                head = stepId;
            }
            if (!late(stepId) && lateness > 0) {
                int bit = slot(stepId);
                seen[bit >>> 6] |= 1L << bit;
            }
        }

        boolean seen(long stepId) {
            if (stepId > head || late(stepId) || lateness == 0) {
                return false;
            }
            int bit = slot(stepId);
            return (seen[bit >>> 6] & (1L << bit)) != 0;
        }

        private void clear(long stepId) {
            int bit = slot(stepId);
            seen[bit >>> 6] &= ~(1L << bit);
        }

        private int slot(long stepId) {
            return (int) Math.floorMod(stepId, 64L * seen.length);
        }
    }

    JudgedSteps(KeyValueStore<String, byte[]> store, int lateness) {
        this.store = store;
        this.lateness = lateness;
    }

    private Window window(String instance) {
        return windows.computeIfAbsent(instance, Window::new);
    }

    /** A step of {@code instance} was seen, {@code kept} if its batches are retained (else null). */
    void see(String instance, long stepId, Kept kept) {
        Window w = window(instance);
        w.see(stepId);
        if (kept != null && !w.late(stepId)) {
            w.kept.put(stepId, kept);
            store.put(prefix(instance) + stepId, kept.encode());
        }
    }

    /** What becomes of a batch of this step now. */
    Fate fate(String instance, long stepId) {
        Window w = window(instance);
        if (w.late(stepId)) {
            return Fate.LATE;
        }
        if (w.kept.containsKey(stepId)) {
            return Fate.KEPT;
        }
        return w.seen(stepId) ? Fate.DROPPED : Fate.UNKNOWN;
    }

    /** The kept step's verdict and ratio, or null if the step was not kept (or is no longer tracked). */
    Kept kept(String instance, long stepId) {
        return window(instance).kept.get(stepId);
    }

    /** The highest step id seen of {@code instance} less the lateness: batches of steps up to it are late (Long.MIN_VALUE: none seen). */
    long lateThrough(String instance) {
        Window w = window(instance);
        return w.head < 0 ? Long.MIN_VALUE : w.head - lateness;
    }

    /** How far the highest step seen of {@code instance} is past {@code stepId} (0 if not past it, or none seen since a restart). */
    long stepsBehind(String instance, long stepId) {
        Window w = window(instance);
        return w.head < 0 ? 0 : Math.max(0, w.head - stepId);
    }

    /** Forgets the kept steps that are late now: no batch of them is retained any more. */
    void forgetLate(String instance) {
        Window w = window(instance);
        while (!w.kept.isEmpty() && w.late(w.kept.firstKey())) {
            store.delete(prefix(instance) + w.kept.pollFirstEntry().getKey());
        }
    }

    /** Kept steps are stored under their instance, apart from the waiting batches' {@code k|} keys. */
    private static String prefix(String instance) {
        return "r|" + instance + "|";
    }
}
