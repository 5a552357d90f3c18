package io.stepline.reports.incident;

import java.util.List;
import java.util.TreeMap;

import io.stepline.events.KernelBatch;

/**
 * One instance's retained kernel batches of outlier steps, by step and rank, held while a run that may
 * contain their step has not been triaged: steps from a floor on (the first step of the oldest run not
 * yet triaged, or the next step to be read through), let go by the steps read through rather than by
 * how many batches were read, so a run sees all of its batches however far ahead they were read.
 */
final class OutlierBatches {
    /**
     * Steps held at most, whatever the floor: memory's bound for a run that stays open for long or kernels read
     * far ahead. Past it the oldest steps go, and a run may then miss batches depending on the pace.
     */
    static final int MAX_STEPS = 4096;

    private final TreeMap<Long, TreeMap<Integer, KernelBatch>> byStep = new TreeMap<>();
    private long floor = Long.MIN_VALUE;

    /** Holds the batch unless its step is below the floor (no run to triage can contain it). */
    void add(KernelBatch b) {
        if (b.getStepId() < floor) {
            return;
        }
        byStep.computeIfAbsent(b.getStepId(), k -> new TreeMap<>()).put(b.getRank(), b);
        while (byStep.size() > MAX_STEPS) {
            byStep.pollFirstEntry();
        }
    }

    /** Lets go of the steps below {@code floor}, and holds none below it from now on. */
    void evict(long floor) {
        this.floor = floor;
        byStep.headMap(floor, false).clear();
    }

    /** The batches of this step, by rank (empty if none). */
    List<KernelBatch> of(long step) {
        TreeMap<Integer, KernelBatch> ranks = byStep.get(step);
        return ranks == null ? List.of() : List.copyOf(ranks.values());
    }
}
