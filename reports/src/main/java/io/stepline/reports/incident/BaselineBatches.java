package io.stepline.reports.incident;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongPredicate;

import io.stepline.events.KernelBatch;

/**
 * One instance's baseline kernel batches (normal steps the detector kept for comparison), held by step
 * and rank, so that what a run is compared with is chosen by step ids relative to the run, not by the
 * order or the number of batches read. What is let go is decided by the steps read through, never by
 * how far ahead the retained kernels were read: the newest {@code keep} batches below a floor (below
 * which every batch has been read, see {@link IncidentReporter}), and everything from the floor on.
 */
final class BaselineBatches {
    /**
     * Batches held at most, whatever the floor: memory's bound for an instance whose run stays open for long
     * (holding the floor back) or whose retained kernels are read far ahead. Past it the oldest go, and what a
     * run is compared with may then depend on the pace; 16 times what a run takes.
     */
    static final int MAX_HELD = 16 * IncidentReporter.MAX_BASELINE_BATCHES;

    private final TreeMap<Long, TreeMap<Integer, KernelBatch>> byStep = new TreeMap<>();
    private int size;

    void add(KernelBatch b) {
        if (byStep.computeIfAbsent(b.getStepId(), k -> new TreeMap<>()).put(b.getRank(), b) == null) {
            size++;
        }
        while (size > MAX_HELD) {
            removeOldest();
        }
    }

    /** Lets go of the batches below {@code floor} but the newest {@code keep} of them. */
    void evict(long floor, int keep) {
        int below = 0;
        for (TreeMap<Integer, KernelBatch> ranks : byStep.headMap(floor, false).values()) {
            below += ranks.size();
        }
        while (below > keep) {
            removeOldest();
            below--;
        }
    }

    /** The newest {@code n} batches of steps below {@code step}, oldest first (ranks in order). */
    List<KernelBatch> newestBefore(long step, int n) {
        return newest(byStep.headMap(step, false), t -> true, n);
    }

    /** The newest {@code n} batches of steps up to {@code step} whose first kernel's start satisfies {@code time}, oldest first. */
    List<KernelBatch> newestThrough(long step, LongPredicate time, int n) {
        return newest(byStep.headMap(step, true), time, n);
    }

    /** The first kernel's start of the oldest batch held (Long.MAX_VALUE if none). */
    long oldestNs() {
        return byStep.isEmpty() ? Long.MAX_VALUE : IncidentReporter.firstKernelNs(byStep.firstEntry().getValue().firstEntry().getValue());
    }

    private static List<KernelBatch> newest(Map<Long, TreeMap<Integer, KernelBatch>> steps, LongPredicate time, int n) {
        List<KernelBatch> out = new ArrayList<>();
        for (TreeMap<Integer, KernelBatch> ranks : ((java.util.NavigableMap<Long, TreeMap<Integer, KernelBatch>>) steps).descendingMap().values()) {
            for (KernelBatch b : ranks.descendingMap().values()) {
                if (out.size() < n && time.test(IncidentReporter.firstKernelNs(b))) {
                    out.add(b);
                }
            }
            if (out.size() >= n) {
                break;
            }
        }
        Collections.reverse(out);
        return out;
    }

    private void removeOldest() {
        Map.Entry<Long, TreeMap<Integer, KernelBatch>> oldest = byStep.firstEntry();
        oldest.getValue().pollFirstEntry();
        if (oldest.getValue().isEmpty()) {
            byStep.pollFirstEntry();
        }
        size--;
    }
}
