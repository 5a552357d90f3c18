package io.stepline.roofline.model.robust;

import io.stepline.events.StepCounters;

/**
 * The basis the robust roofline regresses step latency on: the work a step does, in terms every
 * producer sends (prefill and decode requests and tokens) plus the KV context when a producer
 * reports it. Linear layers cost per token, with hinges because their cost per token falls as the
 * batch fills the GPU (memory-bound small batches, compute-bound large ones); prefill attention is
 * quadratic in each prompt's chunk (approximated by tokens squared per prefill request); decode
 * attention reads the KV context; a step with prefill runs without full CUDA graphs and pays a
 * fixed cost the decode-only step does not. Features are scaled to comparable magnitudes so that
 * one ridge penalty fits all.
 */
public final class CostBasis {
    public static final String[] NAMES = {"intercept", "has_prefill", "tokens_k", "tokens_k_over_0.128", "tokens_k_over_0.512",
        "tokens_k_over_2.048", "prefill_attention_mtokens2", "context_ktokens", "requests_per_100"};
    public static final int SIZE = NAMES.length;
    /** Index of the KV context feature ({@code context_ktokens}). */
    static final int CONTEXT = 7;
    /** Tokens per KV block when the context is derived from KV blocks in use. */
    static final int BLOCK_TOKENS = 16;

    private CostBasis() {}

    /** The KV context of the step's decode requests, or 0 when the producer sends neither the context nor KV blocks. */
    public static double contextTokens(StepCounters s) {
        if (s.getDecodeContextTokens() != null) {
            return s.getDecodeContextTokens();
        }
        if (s.getKvBlocksTotalGpu() != null && s.getKvBlocksFreeGpu() != null) {
            return (double) (s.getKvBlocksTotalGpu() - s.getKvBlocksFreeGpu()) * BLOCK_TOKENS;
        }
        return 0;
    }

    /** Writes the basis of a step's work into {@code out} (length {@link #SIZE}). */
    public static void of(double prefillTokens, double prefillReqs, double decodeReqs, double decodeTokens, double contextTokens, double[] out) {
        double tokensK = (prefillTokens + decodeTokens) / 1000.0;
        out[0] = 1;
        out[1] = prefillTokens > 0 ? 1 : 0;
        out[2] = tokensK;
        out[3] = Math.max(0, tokensK - 0.128);
        out[4] = Math.max(0, tokensK - 0.512);
        out[5] = Math.max(0, tokensK - 2.048);
        out[6] = prefillReqs > 0 ? prefillTokens * prefillTokens / prefillReqs / 1e6 : 0;
        out[CONTEXT] = contextTokens / 1000.0;
        out[8] = (prefillReqs + decodeReqs) / 100.0;
    }

    /**
     * Writes into {@code out} the basis of a decode-only step ({@code basis}, as {@link #of} wrote it) with its
     * requests, tokens and context all multiplied by {@code factor}.
     */
    static void scaledDecode(double[] basis, double factor, double[] out) {
        of(0, 0, basis[8] * 100 * factor, basis[2] * 1000 * factor, basis[CONTEXT] * 1000 * factor, out);
    }

    /**
     * Whether feature {@code j}'s coefficient is a cost, never negative (every feature but the hinges, which bend the
     * line in tokens either way). A step's cost is a fixed part and parts per token, per request, per prompt and per
     * context token; none can be negative, yet over a young instance's narrow range of work, where the intercept, the
     * requests and the context move together, least squares trades them off freely: validation-style faults2-5808's
     * v-dec-7b-b fitted a negative intercept and requests cost and a context cost 1.5x too steep from its first 18
     * points, put work lighter than them 1.2-1.5x low, and flagged 187 healthy steps (docs/BENCHMARKS.md, stop 51).
     */
    static boolean isCost(int j) {
        return !isHinge(j);
    }

    /** Whether basis feature {@code j} is a hinge: the tokens' excess over a knot ({@code tokens_k_over_*}). */
    static boolean isHinge(int j) {
        return j >= 3 && j <= 5;
    }

    public static double dot(double[] coefficients, double[] basis) {
        double y = 0;
        for (int i = 0; i < SIZE; i++) {
            y += coefficients[i] * basis[i];
        }
        return y;
    }
}
