package io.stepline.roofline;

import java.util.SplittableRandom;

import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;

/** Synthetic steps from a simple cost formula, independent of the simulator's latency model. */
public final class Steps {
    private Steps() {}

    public enum Noise { LOGNORMAL, GAMMA_HEAVY_TAIL }

    /** A random mixed/decode batch; latency = (2 ms + 8 us/prefill token + 30 us/decode req + 2 us/ktoken ctx) * noise * slowdown. */
    public static StepRecord step(SplittableRandom rng, String instance, long id, long startNs, Noise noise, double slowdown) {
        int prefill = rng.nextDouble() < 0.3 ? 64 + rng.nextInt(1984) : 0;
        int decode = 1 + rng.nextInt(96);
        long ctx = (long) decode * (200 + rng.nextInt(3000));
        double healthy = 2e6 + 8e3 * prefill + 30e3 * decode + 2.0 * ctx;
        double f = switch (noise) {
            case LOGNORMAL -> Math.exp(0.03 * gaussian(rng));
            case GAMMA_HEAVY_TAIL -> 0.97 + gamma2(rng) * 0.015 + (rng.nextDouble() < 0.001 ? 0.2 * rng.nextDouble() : 0);
        };
        long latency = (long) (healthy * f * slowdown);
        return StepRecord.newBuilder().setInstanceId(instance).setRole(InstanceRole.MIXED).setStepId(id)
                .setStartUnixNano(startNs).setEndUnixNano(startNs + latency).setLatencyNs(latency).setLatencySource(LatencySource.STEP_SPAN)
                .setRunningDepth(decode + (prefill > 0 ? 1 : 0)).setWaitingDepth(0).setNumPrefillReqs(prefill > 0 ? 1 : 0)
                .setNumDecodeReqs(decode).setScheduledTokens(prefill + decode).setPrefillTokens(prefill).setDecodeTokens(decode)
                .setNumFinished(0).setNumPreempted(0).setKvUsageGpuRatio(0.5).setKvBlocksTotalGpu(10_000L).setKvBlocksFreeGpu(5_000L)
                .setDecodeContextTokens(ctx).build();
    }

    /** A decode-only step of {@code decode} requests, costed as {@link #step} costs it (log-normal noise). */
    public static StepRecord decodeStep(SplittableRandom rng, String instance, long id, long startNs, int decode, double slowdown) {
        return decodeStep(rng, instance, id, startNs, decode, (long) decode * (200 + rng.nextInt(3000)), slowdown);
    }

    /** The healthy cost of {@link #decodeStep}'s steps (ns), before noise. */
    public static double decodeHealthyNs(int decode, long ctx) {
        return 2e6 + 30e3 * decode + 2.0 * ctx;
    }

    /** {@link #decodeStep(SplittableRandom, String, long, long, int, double)} with its KV context given. */
    public static StepRecord decodeStep(SplittableRandom rng, String instance, long id, long startNs, int decode, long ctx, double slowdown) {
        double healthy = decodeHealthyNs(decode, ctx);
        long latency = (long) (healthy * Math.exp(0.03 * gaussian(rng)) * slowdown);
        return StepRecord.newBuilder().setInstanceId(instance).setRole(InstanceRole.MIXED).setStepId(id)
                .setStartUnixNano(startNs).setEndUnixNano(startNs + latency).setLatencyNs(latency).setLatencySource(LatencySource.STEP_SPAN)
                .setRunningDepth(decode).setWaitingDepth(0).setNumPrefillReqs(0).setNumDecodeReqs(decode).setScheduledTokens(decode)
                .setPrefillTokens(0).setDecodeTokens(decode).setNumFinished(0).setNumPreempted(0).setKvUsageGpuRatio(0.5)
                .setKvBlocksTotalGpu(10_000L).setKvBlocksFreeGpu(5_000L).setDecodeContextTokens(ctx).build();
    }

    /**
     * A decode step as a vLLM iteration log reports it: batch counts only, no KV context. Latency =
     * (3 ms + 40 us/decode req + {@code perRequestNs}/decode req) * noise * slowdown, where the caller
     * drifts {@code perRequestNs} (the requests' unreported attention cost) as their contexts change.
     */
    public static StepRecord logStep(SplittableRandom rng, String instance, long id, long startNs, int decode, double perRequestNs, double slowdown) {
        return logStep(rng, instance, id, startNs, decode, 0, perRequestNs, slowdown);
    }

    /** An iteration-log step that also prefills one prompt of {@code prefillTokens} (0: none); its cost is the prompt's, not the context's. */
    public static StepRecord logStep(SplittableRandom rng, String instance, long id, long startNs, int decode, int prefillTokens,
                                     double perRequestNs, double slowdown) {
        double healthy = 3e6 + 40e3 * decode + perRequestNs * decode + (prefillTokens > 0 ? 2e6 + 15e3 * prefillTokens : 0);
        long latency = (long) (healthy * Math.exp(0.03 * gaussian(rng)) * slowdown);
        return StepRecord.newBuilder().setInstanceId(instance).setRole(InstanceRole.MIXED).setStepId(id)
                .setStartUnixNano(startNs).setEndUnixNano(startNs + latency).setLatencyNs(latency).setLatencySource(LatencySource.ITERATION_LOG)
                .setRunningDepth(decode + (prefillTokens > 0 ? 1 : 0)).setWaitingDepth(0).setNumPrefillReqs(prefillTokens > 0 ? 1 : 0)
                .setNumDecodeReqs(decode).setScheduledTokens(decode + prefillTokens).setPrefillTokens(prefillTokens).setDecodeTokens(decode).build();
    }

    static double gaussian(SplittableRandom rng) {
        return Math.sqrt(-2 * Math.log(1 - rng.nextDouble())) * Math.cos(2 * Math.PI * rng.nextDouble());
    }

    /** Gamma(2, 1): right-skewed. */
    static double gamma2(SplittableRandom rng) {
        return -Math.log(1 - rng.nextDouble()) - Math.log(1 - rng.nextDouble());
    }
}
