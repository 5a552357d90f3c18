package io.stepline.roofline.model;

import io.stepline.events.StepCounters;

/**
 * The work in a step, as the features the default model regresses latency on. All come from the
 * step counters (docs/INPUT.md): prefill tokens (GEMM cost), decode requests (per-sequence cost),
 * decode KV context (attention reads; from batch.decode_context_tokens, else KV blocks in use x 16),
 * and prefill tokens squared per prefill request (prefill attention, quadratic in chunk length).
 */
public final class StepFeatures {
    public static final String[] NAMES = {"prefill_tokens", "decode_reqs", "decode_context_ktokens", "prefill_attention_mtokens2"};
    public static final int COUNT = NAMES.length;
    static final int BLOCK_TOKENS = 16;

    private StepFeatures() {}

    public static double[] of(StepCounters s) {
        double prefill = s.getPrefillTokens();
        double decode = s.getNumDecodeReqs();
        double ctx;
        if (s.getDecodeContextTokens() != null) {
            ctx = s.getDecodeContextTokens();
        } else if (s.getKvBlocksTotalGpu() != null && s.getKvBlocksFreeGpu() != null) {
            ctx = (double) (s.getKvBlocksTotalGpu() - s.getKvBlocksFreeGpu()) * BLOCK_TOKENS;
        } else {
            ctx = 0; // a producer without kv.* keys: the context term cannot be learned
        }
        double quad = s.getNumPrefillReqs() > 0 ? prefill * prefill / s.getNumPrefillReqs() : 0;
        return new double[] {prefill, decode, ctx / 1000.0, quad / 1e6};
    }

    /** StriaTrace's single feature: prompt tokens for prefill work, batch size for decode-only steps. */
    public static long processedTokens(StepCounters s) {
        return s.getPrefillTokens() > 0 ? s.getPrefillTokens() : s.getNumDecodeReqs();
    }
}
