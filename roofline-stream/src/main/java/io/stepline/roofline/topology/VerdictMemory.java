package io.stepline.roofline.topology;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import io.stepline.events.Verdict;
import io.stepline.roofline.topology.RetentionInput.Judgement;

/**
 * The judgements a task remembers for kernel batches that arrive after their step: the recent
 * ones exactly, and beyond those the outliers only (a step judged long ago and not among them
 * was normal). In memory: after a restart, batches of steps judged before it wait and expire.
 */
final class VerdictMemory {
    /** Recent judgements per instance kept for kernel batches that arrive after their step. */
    static final int VERDICT_CACHE = 8192;
    /** Outlier step ids remembered per instance beyond the verdict cache, for batches that arrive very late. */
    static final int OUTLIER_MEMORY = 65_536;

    private final Map<String, LinkedHashMap<Long, Judgement>> recent = new HashMap<>();
    /** Per instance: the highest step id judged, and the recent outliers. */
    private final Map<String, Long> highestJudged = new HashMap<>();
    private final Map<String, LinkedHashMap<Long, Judgement>> outliers = new HashMap<>();

    void remember(String inst, Judgement j) {
        bounded(recent, inst, VERDICT_CACHE).put(j.stepId(), j);
        highestJudged.merge(inst, j.stepId(), Math::max);
        if (j.verdict() == Verdict.OUTLIER) {
            bounded(outliers, inst, OUTLIER_MEMORY).put(j.stepId(), j);
        }
    }

    /** The judgement of this step, or null if it was not judged yet (its batch then waits). */
    Judgement of(String inst, long stepId) {
        LinkedHashMap<Long, Judgement> known = recent.get(inst);
        Judgement j = known == null ? null : known.get(stepId);
        return j != null ? j : judgedEarlier(inst, stepId);
    }

    /**
     * A step judged too long ago to be in the cache: an outlier if it is among the remembered
     * outliers, else a normal step. Null if the step was not judged yet.
     */
    private Judgement judgedEarlier(String inst, long stepId) {
        Long highest = highestJudged.get(inst);
        // within the cache's reach a miss means "not judged yet" (steps may come a little out of order)
        if (highest == null || stepId > highest - VERDICT_CACHE) {
            return null;
        }
        LinkedHashMap<Long, Judgement> o = outliers.get(inst);
        Judgement j = o == null ? null : o.get(stepId);
        return j != null ? j : Judgement.normalWithoutRatio(stepId);
    }

    private static LinkedHashMap<Long, Judgement> bounded(Map<String, LinkedHashMap<Long, Judgement>> m, String inst, int cap) {
        return m.computeIfAbsent(inst, k -> new LinkedHashMap<>(Math.min(cap, 1024), 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Judgement> eldest) {
                return size() > cap;
            }
        });
    }
}
