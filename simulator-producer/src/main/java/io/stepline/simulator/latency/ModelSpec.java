package io.stepline.simulator.latency;

/**
 * A served model's shape and its measured per-layer cost on H100, from Vidur's operator profiles
 * ({@code data/vidur/h100/llama-2-*-mlp.csv}, MIT): for each tensor-parallel degree we summed the
 * mean time of every per-layer operator but the embedding (input_layernorm, attn_pre_proj,
 * attn_rope, attn_post_proj, post_attention_layernorm, mlp_up_proj, mlp_act, mlp_down_proj, add)
 * and fitted {@code ms = intercept + perToken * num_tokens} by least squares over the 261 rows of
 * each degree (R^2 >= 0.994 everywhere).
 */
public enum ModelSpec {
    LLAMA2_7B(32, 4096, 32, 32,
            new double[] {0.11482, 0.08691, 0.05979, 0.04033},
            new double[] {0.0006214, 0.0003184, 0.0001818, 0.0001168}),
    LLAMA2_70B(80, 8192, 64, 8,
            new double[] {0.37130, 0.22204, 0.12868, 0.09733},
            new double[] {0.0025747, 0.0012718, 0.0006536, 0.0003515});

    /** Tensor-parallel degrees the profiles cover, in the order of the coefficient arrays. */
    public static final int[] TP_DEGREES = {1, 2, 4, 8};

    public final int layers;
    public final int hidden;
    public final int heads;
    public final int kvHeads;
    private final double[] linearInterceptMs;
    private final double[] linearPerTokenMs;

    ModelSpec(int layers, int hidden, int heads, int kvHeads, double[] interceptMs, double[] perTokenMs) {
        this.layers = layers;
        this.hidden = hidden;
        this.heads = heads;
        this.kvHeads = kvHeads;
        this.linearInterceptMs = interceptMs;
        this.linearPerTokenMs = perTokenMs;
    }

    static int tpIndex(int tp) {
        for (int i = 0; i < TP_DEGREES.length; i++) {
            if (TP_DEGREES[i] == tp) {
                return i;
            }
        }
        throw new IllegalArgumentException("tensor-parallel degree must be one of 1, 2, 4, 8, got " + tp);
    }

    /** Time of one layer's linear operators (GEMMs, norms, activation) for {@code tokens} tokens, in ns. */
    public double linearLayerNs(int tokens, int tp) {
        int i = tpIndex(tp);
        return (linearInterceptMs[i] + linearPerTokenMs[i] * tokens) * 1e6;
    }

    /** Bytes of KV cache per token (K and V, bf16, all layers), for the whole model before TP sharding. */
    public long kvBytesPerToken() {
        return 2L * layers * (long) hidden / heads * kvHeads * 2L;
    }
}
