package io.stepline.ingest.kernels;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A CPU-side range of a Kineto trace that marks one step, with its bounds in trace nanoseconds
 * ({@code ts} x 1000, before the time base is added).
 *
 * <p>Two kinds are recognised by name, whatever their {@code cat} ({@code user_annotation} in
 * current traces):
 * <ul>
 * <li>{@code ProfilerStep#N}, written by {@code torch.profiler.profile.step()}: the step id is N.</li>
 * <li>vLLM's worker annotation around each {@code execute_model} ({@code Worker.annotate_profile} in
 * {@code vllm/v1/worker/gpu_worker.py}): {@code execute_context_C(T)_generation_G(U)} (C context
 * requests scheduling T tokens, G generation requests scheduling U tokens), its detailed form
 * {@code execute_N_context_C(sqTsk..sqsq..sqsk..)_generation_G(sqUsk..sqsq..sqsk..)} (N scheduled
 * tokens, with roofline sums we do not keep), and the older {@code execute_new_A_cached_B} (new and
 * cached request counts, no context/generation split). These carry no step id.</li>
 * </ul>
 */
public record StepAnnotation(String name, Kind kind, long profilerStep, VllmBatch vllm, long startNs, long endNs) {
    /** Where the annotation comes from. */
    public enum Kind {
        /** {@code ProfilerStep#N}. */
        PROFILER_STEP,
        /** vLLM's {@code execute_...} worker annotation. */
        VLLM_EXECUTE
    }

    /** No step id in the name (vLLM annotations). */
    public static final long NO_PROFILER_STEP = -1;

    /**
     * The batch a vLLM annotation describes; a count is -1 where its form does not carry it
     * ({@code execute_new_A_cached_B} has only request counts; only the detailed form has the total).
     */
    public record VllmBatch(long scheduledTokens, long contextRequests, long contextTokens, long generationRequests, long generationTokens,
            long newRequests, long cachedRequests) {
        /** A count this form of the annotation does not carry. */
        public static final long UNKNOWN = -1;
    }

    private static final Pattern PROFILER_STEP = Pattern.compile("ProfilerStep#(\\d{1,18})");
    private static final String ROOFLINE_SUMS = "sk\\d+sqsq\\d+sqsk\\d+";
    private static final Pattern VLLM_PLAIN = Pattern.compile("execute_context_(\\d{1,18})\\((\\d{1,18})\\)_generation_(\\d{1,18})\\((\\d{1,18})\\)");
    private static final Pattern VLLM_DETAILED = Pattern.compile("execute_(\\d{1,18})_context_(\\d{1,18})\\(sq(\\d{1,18})" + ROOFLINE_SUMS
            + "\\)_generation_(\\d{1,18})\\(sq(\\d{1,18})" + ROOFLINE_SUMS + "\\)");
    private static final Pattern VLLM_NEW_CACHED = Pattern.compile("execute_new_(\\d{1,18})_cached_(\\d{1,18})");

    /** The annotation named {@code name} over [{@code startNs}, {@code endNs}], or null when the name marks no step. */
    public static StepAnnotation parse(String name, long startNs, long endNs) {
        if (name == null) {
            return null;
        }
        Matcher m = PROFILER_STEP.matcher(name);
        if (m.matches()) {
            return new StepAnnotation(name, Kind.PROFILER_STEP, Long.parseLong(m.group(1)), null, startNs, endNs);
        }
        long u = VllmBatch.UNKNOWN;
        m = VLLM_PLAIN.matcher(name);
        if (m.matches()) {
            return vllm(name, new VllmBatch(u, n(m, 1), n(m, 2), n(m, 3), n(m, 4), u, u), startNs, endNs);
        }
        m = VLLM_DETAILED.matcher(name);
        if (m.matches()) {
            return vllm(name, new VllmBatch(n(m, 1), n(m, 2), n(m, 3), n(m, 4), n(m, 5), u, u), startNs, endNs);
        }
        m = VLLM_NEW_CACHED.matcher(name);
        if (m.matches()) {
            return vllm(name, new VllmBatch(u, u, u, u, u, n(m, 1), n(m, 2)), startNs, endNs);
        }
        return null;
    }

    private static StepAnnotation vllm(String name, VllmBatch b, long startNs, long endNs) {
        return new StepAnnotation(name, Kind.VLLM_EXECUTE, NO_PROFILER_STEP, b, startNs, endNs);
    }

    private static long n(Matcher m, int group) {
        return Long.parseLong(m.group(group));
    }

    /** Whether a launch at {@code ns} (trace nanoseconds) falls in this range, bounds included. */
    public boolean contains(long ns) {
        return ns >= startNs && ns <= endNs;
    }
}
