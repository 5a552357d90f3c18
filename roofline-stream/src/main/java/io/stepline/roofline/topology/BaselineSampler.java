package io.stepline.roofline.topology;

import java.util.HashMap;
import java.util.Map;

import io.stepline.events.KernelBatch;

/**
 * Which NORMAL steps' kernel batches are kept as baselines for the reports: a deterministic
 * sample (a replay keeps the same baseline steps), and at least one per instance and rank in each
 * {@link #BASELINE_PERIOD_NS} of step time, so slow instances get baselines too.
 */
final class BaselineSampler {
    /** At least one baseline batch per instance and rank in each such period of step time. */
    static final long BASELINE_PERIOD_NS = 5_000_000_000L;

    private final double sampleRate;
    /** Per instance and rank: the time bucket of the last periodic baseline. */
    private final Map<String, Long> lastBaselineBucket = new HashMap<>();

    BaselineSampler(double sampleRate) {
        this.sampleRate = sampleRate;
    }

    boolean keep(KernelBatch kb) {
        return sampled(kb.getInstanceId(), kb.getStepId()) || periodic(kb);
    }

    private boolean periodic(KernelBatch kb) {
        if (sampleRate <= 0 || kb.getKernels().isEmpty()) {
            return false;
        }
        long bucket = kb.getKernels().get(0).getStartNs() / BASELINE_PERIOD_NS;
        Long last = lastBaselineBucket.put(kb.getInstanceId() + "/" + kb.getRank(), bucket);
        return last == null || bucket > last;
    }

    private boolean sampled(String inst, long stepId) {
        if (sampleRate <= 0) {
            return false;
        }
        long h = (inst.hashCode() * 0x9E3779B97F4A7C15L) ^ (stepId * 0xC2B2AE3D27D4EB4FL);
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        return (h >>> 11) * 0x1.0p-53 < sampleRate;
    }
}
