package io.stepline.simulator.latency;

/**
 * Healthy time of one engine step, split into the phases a vLLM v1 step goes through.
 *
 * <pre>
 * forward = layers * linear(tokens, tp)                       (Vidur H100 operator fit, {@link ModelSpec})
 *         + prefill attention: 4 * L * d * sum(chunk * ctx) / tp / PREFILL_ATTENTION_FLOPS
 *         + decode attention:  kv_bytes_per_token * decode_context_tokens / tp / HBM_BYTES_PER_S
 *         + all-reduce (tp > 1): 2 * L * (AR_INTERCEPT + AR_PER_ELEMENT * tokens * d)
 * sample  = SAMPLE_BASE + SAMPLE_PER_SEQ * sequences  (+ the sampler kernels)
 * host    = schedule + preprocess + postprocess + output, each BASE + PER_SEQ * sequences
 * step    = schedule + preprocess + forward + sample + postprocess + output
 * </pre>
 * All-reduce constants are the least-squares fit to {@code pairwise-nvlink-all-reduce.csv}
 * (median time vs element count, 4 workers: 0.04641 ms + 3.023e-8 ms/element; 2 workers:
 * 0.01711 ms + 5.061e-9 ms/element; 8 workers extrapolated as 4). Attention constants are
 * analytic: 60% of H100's 989 TFLOP/s bf16 for prefill, 70% of its 3.35 TB/s HBM for decode.
 * Host-side constants are typical vLLM v1 CPU overheads (hundreds of microseconds per step).
 */
public final class StepLatencyModel {
    static final double PREFILL_ATTENTION_FLOPS = 0.6 * 989e12;
    static final double HBM_BYTES_PER_S = 0.7 * 3.35e12;
    static final double SCHEDULE_BASE_NS = 180_000;
    static final double SCHEDULE_PER_SEQ_NS = 2_500;
    static final double PREPROCESS_BASE_NS = 120_000;
    static final double PREPROCESS_PER_SEQ_NS = 1_500;
    static final double SAMPLE_BASE_NS = 90_000;
    static final double SAMPLE_PER_SEQ_NS = 3_000;
    static final double POSTPROCESS_BASE_NS = 60_000;
    static final double POSTPROCESS_PER_SEQ_NS = 1_000;
    static final double OUTPUT_BASE_NS = 110_000;
    static final double OUTPUT_PER_SEQ_NS = 2_000;

    private final ModelSpec model;
    private final int tp;

    public StepLatencyModel(ModelSpec model, int tp) {
        ModelSpec.tpIndex(tp);
        this.model = model;
        this.tp = tp;
    }

    public ModelSpec model() {
        return model;
    }

    public int tp() {
        return tp;
    }

    /** What a step computes. */
    public record Work(int prefillTokens, double prefillAttentionWork, int decodeReqs, long decodeContextTokens, int sequences) {
        /** prefillAttentionWork = sum over prefill chunks of chunk_tokens * context_after_chunk. */
        public int tokens() {
            return prefillTokens + decodeReqs;
        }
    }

    /** Healthy phase durations, in ns. */
    public record Phases(double schedule, double preprocess, double forwardLinear, double forwardAttention,
                         double allReduce, double sample, double postprocess, double output) {
        public double forward() {
            return forwardLinear + forwardAttention + allReduce;
        }

        public double total() {
            return schedule + preprocess + forward() + sample + postprocess + output;
        }
    }

    public Phases phases(Work w) {
        int tokens = Math.max(1, w.tokens());
        double linear = model.layers * model.linearLayerNs(tokens, tp);
        double prefillAttn = 4.0 * model.layers * model.hidden * w.prefillAttentionWork() / tp / PREFILL_ATTENTION_FLOPS * 1e9;
        double decodeAttn = (double) model.kvBytesPerToken() * w.decodeContextTokens() / tp / HBM_BYTES_PER_S * 1e9;
        double allReduce = tp == 1 ? 0 : 2.0 * model.layers * allReduceNs(tokens * (long) model.hidden);
        int seqs = Math.max(1, w.sequences());
        return new Phases(
                SCHEDULE_BASE_NS + SCHEDULE_PER_SEQ_NS * seqs,
                PREPROCESS_BASE_NS + PREPROCESS_PER_SEQ_NS * seqs,
                linear, prefillAttn + decodeAttn, allReduce,
                SAMPLE_BASE_NS + SAMPLE_PER_SEQ_NS * seqs,
                POSTPROCESS_BASE_NS + POSTPROCESS_PER_SEQ_NS * seqs,
                OUTPUT_BASE_NS + OUTPUT_PER_SEQ_NS * seqs);
    }

    double allReduceNs(long elements) {
        double interceptMs = tp == 2 ? 0.01711 : 0.04641;
        double perElementMs = tp == 2 ? 5.061e-9 : 3.023e-8;
        return (interceptMs + perElementMs * elements) * 1e6;
    }

    /** Time to move a request's KV cache from a prefill to a decode instance (seeds/004 step 5). */
    public double kvTransferNs(int promptTokens, double bytesPerSecond, double latencyNs) {
        return latencyNs + (double) model.kvBytesPerToken() * promptTokens / bytesPerSecond * 1e9;
    }
}
