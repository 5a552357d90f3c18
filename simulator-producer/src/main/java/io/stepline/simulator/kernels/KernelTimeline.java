package io.stepline.simulator.kernels;

import java.util.ArrayList;
import java.util.List;

import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;

/**
 * Lays out one rank's kernels of one step on its streams: an H2D copy of the inputs, then per
 * (simulated) layer norm, QKV GEMM, rotary, attention (prefill or decode variant), O GEMM,
 * all-reduce (TP > 1, on the NCCL stream), norm, up GEMM, activation, down GEMM, all-reduce,
 * then the sampler kernels and a D2H copy of the sampled ids. Kernel times are proportional to
 * the phase budgets and separated by small launch gaps; a stall inserts an idle bubble.
 */
public final class KernelTimeline {
    public static final int COMPUTE_STREAM = 7;
    public static final int COPY_STREAM = 8;
    public static final int NCCL_STREAM = 13;
    static final int KERNELS_PER_LAYER_TP1 = 9;
    static final int KERNELS_PER_LAYER_TP = 11;
    static final long LAUNCH_GAP_NS = 3_000;

    private KernelTimeline() {}

    /** Budgets of one rank for one step, ns, and what to draw. */
    public record Plan(long forwardStartNs, double linearNs, double attentionNs, double allReduceNs, double stallBubbleNs,
                       double kernelSlowdown, double regressionSlowdown, double collectiveWaitNs,
                       long sampleStartNs, double sampleKernelNs, double sampleBubbleNs,
                       boolean prefill, boolean regressedVariant, int tp, int kernelsPerRank, int layers) {}

    public static List<KernelRecord> layout(Plan p) {
        int perLayer = p.tp() > 1 ? KERNELS_PER_LAYER_TP : KERNELS_PER_LAYER_TP1;
        int layers = Math.max(1, Math.min(p.layers(), (p.kernelsPerRank() - 4) / perLayer));
        List<KernelRecord> out = new ArrayList<>(layers * perLayer + 6);
        long t = p.forwardStartNs();
        long copy = 8_000;
        out.add(new KernelRecord(KernelNames.MEMCPY_H2D, KernelKind.MEMCPY, COPY_STREAM, t, t + copy, 262_144L));
        t += copy + LAUNCH_GAP_NS;
        double lin = p.linearNs() * p.kernelSlowdown() / layers;
        double attn = p.attentionNs() * p.kernelSlowdown() / layers;
        double ar = p.allReduceNs() * p.kernelSlowdown() / layers / 2;
        double wait = p.collectiveWaitNs() / 2;
        String attnName = p.prefill() ? KernelNames.ATTN_PREFILL : KernelNames.ATTN_DECODE;
        String upName = p.regressedVariant() ? KernelNames.GEMM_UP_REGRESSED : KernelNames.GEMM_UP;
        String downName = p.regressedVariant() ? KernelNames.GEMM_DOWN_REGRESSED : KernelNames.GEMM_DOWN;
        double upFactor = p.regressedVariant() ? p.regressionSlowdown() : 1;
        int bubbleLayer = layers / 2;
        for (int l = 0; l < layers; l++) {
            if (l == bubbleLayer && p.stallBubbleNs() > 0) {
                t += (long) p.stallBubbleNs(); // host stall: nothing launched on this rank
            }
            t = add(out, KernelNames.RMS_NORM, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.04);
            t = add(out, KernelNames.GEMM_QKV, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.22);
            t = add(out, KernelNames.ROPE, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.03);
            t = add(out, attnName, KernelKind.KERNEL, COMPUTE_STREAM, t, Math.max(attn, 2_000));
            t = add(out, KernelNames.GEMM_O, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.12);
            if (p.tp() > 1) {
                t = add(out, KernelNames.ALL_REDUCE, KernelKind.COLLECTIVE, NCCL_STREAM, t, ar + (l == bubbleLayer ? wait : 0));
            }
            t = add(out, KernelNames.RMS_NORM, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.04);
            t = add(out, upName, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.30 * upFactor);
            t = add(out, KernelNames.SILU, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.05);
            t = add(out, downName, KernelKind.KERNEL, COMPUTE_STREAM, t, lin * 0.20 * upFactor);
            if (p.tp() > 1) {
                t = add(out, KernelNames.ALL_REDUCE, KernelKind.COLLECTIVE, NCCL_STREAM, t, ar + (l == bubbleLayer ? wait : 0));
            }
        }
        long s = Math.max(t, p.sampleStartNs()) + (long) p.sampleBubbleNs();
        double sk = p.sampleKernelNs() * p.kernelSlowdown();
        s = add(out, KernelNames.SAMPLER_SOFTMAX, KernelKind.KERNEL, COMPUTE_STREAM, s, sk * 0.6);
        s = add(out, KernelNames.SAMPLER_TOPK, KernelKind.KERNEL, COMPUTE_STREAM, s, sk * 0.4);
        add(out, KernelNames.MEMCPY_D2H, KernelKind.MEMCPY, COPY_STREAM, s, 4_000);
        return out;
    }

    private static long add(List<KernelRecord> out, String name, KernelKind kind, int stream, long start, double durNs) {
        long d = Math.max(1_000, (long) durNs);
        Long bytes = kind == KernelKind.COLLECTIVE ? 8_388_608L : null;
        out.add(new KernelRecord(name, kind, stream, start, start + d, bytes));
        return start + d + LAUNCH_GAP_NS;
    }

    /** How long the rank's kernels take end to end (for placing the sample phase). */
    public static long end(List<KernelRecord> kernels) {
        long end = 0;
        for (KernelRecord k : kernels) {
            end = Math.max(end, k.getEndNs());
        }
        return end;
    }
}
