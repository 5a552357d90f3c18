package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.opentelemetry.proto.trace.v1.Span;

import io.stepline.events.LatencySource;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.otlp.StepAttributes;

/**
 * Maps the step-level payload of docs/INPUT.md, "Step keys" (form A span attributes or a form B
 * {@code step.BATCH_SUMMARY} event) into a {@link StepRecord}, checking types, required keys
 * and the section's invariants.
 */
public final class StepMapper {
    /** Aliases of the contract's names (schemas' StepAttributes), kept for ingest's callers. */
    public static final String STEP_SPAN = StepAttributes.STEP_SPAN;
    public static final String BATCH_SUMMARY = StepAttributes.BATCH_SUMMARY;
    public static final Set<String> ENGINE_PHASES = StepAttributes.ENGINE_PHASES;
    public static final Set<String> RANK_PHASES = StepAttributes.RANK_PHASES;
    /**
     * Every key {@link #batchSummary} reads: what {@link StepSummaryValues} keeps of a step span read
     * from bytes, in the order the simulator writes them in, which the reader tries first.
     */
    static final List<String> BATCH_SUMMARY_KEYS = StepAttributes.BATCH_SUMMARY_KEYS;
    /** An hour: no engine step takes longer; anything above is a broken clock or unit. */
    public static final long MAX_STEP_NS = 3_600_000_000_000L;

    private StepMapper() {}

    public static boolean isPhase(String name) {
        return ENGINE_PHASES.contains(name) || RANK_PHASES.contains(name);
    }

    /**
     * Reasons a step record is less than complete ({@code StepRecord.degraded} and the label of
     * {@code stepline_ingest_degraded_total}): an optional key group the producer did not send, or a
     * latency that could not be known. A degraded step is kept; only the absent values are null.
     */
    public static final String MISSING_KV = "MISSING_KV";
    public static final String MISSING_QUEUE = "MISSING_QUEUE";
    public static final String MISSING_FINISHED_PREEMPTED = "MISSING_FINISHED_PREEMPTED";
    public static final String MISSING_SCHEDULED_TOKENS = "MISSING_SCHEDULED_TOKENS";
    public static final String MISSING_TS = "MISSING_TS";
    public static final String NO_SUCCESSOR = "NO_SUCCESSOR";
    /** A vLLM iteration-log step under async scheduling: the printed time is only a residual wait, so no latency (docs/INPUT.md). */
    public static final String ASYNC_SCHEDULING = "ASYNC_SCHEDULING";
    /** A vLLM data-parallel padding iteration ({@code (dummy)}): no requests, its time is the wait for the other ranks; no latency. */
    public static final String DP_PADDING = "DP_PADDING";

    /**
     * The batch summary of {@code a} into a builder (identity and timing left to the caller).
     * Required: {@code step.id} and the batch counts (prefill/decode requests and tokens); every
     * other key is optional and recorded as null with a reason in {@code degraded} when absent
     * (docs/INPUT.md).
     */
    static StepRecord.Builder batchSummary(Attributes a, InstanceIdentity id, String where) {
        List<String> degraded = new ArrayList<>(2);
        int prefillTokens = a.requireInt(StepAttributes.BATCH_PREFILL_TOKENS);
        int decodeTokens = a.requireInt(StepAttributes.BATCH_DECODE_TOKENS);
        Integer scheduled = a.optInt(StepAttributes.BATCH_SCHEDULED_TOKENS);
        if (scheduled == null) {
            scheduled = prefillTokens + decodeTokens;
            degraded.add(MISSING_SCHEDULED_TOKENS);
        }
        StepRecord.Builder b = StepRecord.newBuilder()
                .setInstanceId(id.instanceId()).setRole(id.role())
                .setStepId(a.requireLong(StepAttributes.STEP_ID))
                .setRunningDepth(a.optInt(StepAttributes.QUEUE_RUNNING_DEPTH))
                .setWaitingDepth(a.optInt(StepAttributes.QUEUE_WAITING_DEPTH))
                .setNumPrefillReqs(a.requireInt(StepAttributes.BATCH_NUM_PREFILL_REQS))
                .setNumDecodeReqs(a.requireInt(StepAttributes.BATCH_NUM_DECODE_REQS))
                .setScheduledTokens(scheduled)
                .setPrefillTokens(prefillTokens)
                .setDecodeTokens(decodeTokens)
                .setNumFinished(a.optInt(StepAttributes.BATCH_NUM_FINISHED))
                .setNumPreempted(a.optInt(StepAttributes.BATCH_NUM_PREEMPTED))
                .setKvUsageGpuRatio(a.optDouble(StepAttributes.KV_USAGE_GPU_RATIO))
                .setKvBlocksTotalGpu(a.optLong(StepAttributes.KV_BLOCKS_TOTAL_GPU))
                .setKvBlocksFreeGpu(a.optLong(StepAttributes.KV_BLOCKS_FREE_GPU))
                .setKvBlocksCpuOffload(a.optLong(StepAttributes.KV_BLOCKS_CPU_OFFLOAD))
                .setKvBlocksDiskOffload(a.optLong(StepAttributes.KV_BLOCKS_DISK_OFFLOAD))
                .setDecodeContextTokens(a.optLong(StepAttributes.BATCH_DECODE_CONTEXT_TOKENS))
                .setTsStartNs(a.optLong(StepAttributes.STEP_TS_START_NS))
                .setTsEndNs(a.optLong(StepAttributes.STEP_TS_END_NS))
                .setDurationUs(a.optLong(StepAttributes.STEP_DURATION_US))
                .setTpSize(id.tp())
                .setLatencyNs(0).setStartUnixNano(0).setEndUnixNano(0);
        if (b.getRunningDepth() == null || b.getWaitingDepth() == null) {
            degraded.add(MISSING_QUEUE);
        }
        if (b.getNumFinished() == null || b.getNumPreempted() == null) {
            degraded.add(MISSING_FINISHED_PREEMPTED);
        }
        if (b.getKvUsageGpuRatio() == null || b.getKvBlocksTotalGpu() == null || b.getKvBlocksFreeGpu() == null) {
            degraded.add(MISSING_KV);
        }
        Long explicit = a.optLong(StepAttributes.STEP_LATENCY_NS);
        if (explicit == null && a.has(StepAttributes.STEP_LATENCY_US)) {
            explicit = a.requireLong(StepAttributes.STEP_LATENCY_US) * 1000;
        }
        if (explicit != null) {
            if (explicit < 0 || explicit > MAX_STEP_NS) {
                throw new Rejection(Rejection.ABSURD_VALUE, where + ": explicit step latency " + explicit + " ns");
            }
            b.setLatencyNs(explicit).setLatencySource(LatencySource.EXPLICIT);
        }
        b.setDegraded(degraded);
        checkInvariants(b, where);
        return b;
    }

    /** Largest step id taken: 2^53 steps at 10,000 a second would take 28,000 years to count (hostile-input fuzzing, issue 16). */
    public static final long MAX_STEP_ID = 1L << 53;

    /** Rejects a step whose counts break the invariants of docs/INPUT.md, "Step keys" (negative counts, a KV ratio outside [0, 1], ...). */
    public static void checkInvariants(StepRecord.Builder b, String where) {
        if (b.getStepId() < 0) {
            throw invariant(b, where, "step.id < 0");
        }
        if (b.getStepId() > MAX_STEP_ID) {
            // one such id would make the instance's every later step look like it went backwards
            throw new Rejection(Rejection.ABSURD_VALUE, where + ": step.id " + b.getStepId() + " above 2^53");
        }
        if ((b.getDurationUs() != null && b.getDurationUs() < 0)
                || (b.getTsStartNs() != null && b.getTsEndNs() != null && b.getTsEndNs() < b.getTsStartNs())) {
            throw invariant(b, where, "negative step duration");
        }
        if (negative(b.getRunningDepth()) || negative(b.getWaitingDepth()) || b.getNumPrefillReqs() < 0 || b.getNumDecodeReqs() < 0
                || b.getScheduledTokens() < 0 || b.getPrefillTokens() < 0 || b.getDecodeTokens() < 0 || negative(b.getNumFinished())
                || negative(b.getNumPreempted())) {
            throw invariant(b, where, "a queue or batch count is negative");
        }
        if (b.getRunningDepth() != null && b.getNumPrefillReqs() + b.getNumDecodeReqs() > b.getRunningDepth()) {
            throw invariant(b, where, "num_prefill_reqs + num_decode_reqs > running_depth");
        }
        Double ratio = b.getKvUsageGpuRatio();
        if (ratio != null && !(ratio >= 0 && ratio <= 1)) {
            throw invariant(b, where, "kv.usage_gpu_ratio " + ratio + " outside [0, 1]");
        }
        Long free = b.getKvBlocksFreeGpu();
        Long total = b.getKvBlocksTotalGpu();
        if ((free != null && free < 0) || (free != null && total != null && total < free)) {
            throw invariant(b, where, "kv.blocks_free_gpu outside [0, kv.blocks_total_gpu]");
        }
        // prefill + decode == scheduled is "expected", not required (speculative decoding): only reject the impossible
        if (b.getPrefillTokens() + (long) b.getDecodeTokens() > 4L * Math.max(1, b.getScheduledTokens()) + 1024) {
            throw new Rejection(Rejection.ABSURD_VALUE, where + " (step " + b.getStepId() + "): prefill + decode tokens far above scheduled tokens");
        }
    }

    private static boolean negative(Integer v) {
        return v != null && v < 0;
    }

    /** Built only when a check fails: the message costs more than the checks. */
    private static Rejection invariant(StepRecord.Builder b, String where, String what) {
        return new Rejection(Rejection.INVARIANT_VIOLATED, where + " (step " + b.getStepId() + "): " + what);
    }

    /** Form A: an EngineCore::Step span and the phase spans found for it. */
    public static StepRecord formA(FragmentSpan step, List<FragmentSpan> children, InstanceIdentity id) {
        String spanHex = step.spanIdHex();
        String where = STEP_SPAN + " span " + spanHex;
        StepRecord.Builder b = batchSummary(step.attributes(where), id, where);
        long start = step.startTimeUnixNano();
        long end = step.endTimeUnixNano();
        if (end < start) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, where + ": span ends before it starts");
        }
        if (end - start > MAX_STEP_NS) {
            throw new Rejection(Rejection.ABSURD_VALUE, where + ": step span longer than an hour");
        }
        b.setStartUnixNano(start).setEndUnixNano(end);
        if (b.getLatencySource() != LatencySource.EXPLICIT) {
            b.setLatencyNs(end - start).setLatencySource(LatencySource.STEP_SPAN);
        }
        b.setTraceId(step.traceIdHex()).setSpanId(spanHex);
        b.setPhases(phases(children));
        return b.build();
    }

    static List<PhaseSpan> phases(List<FragmentSpan> children) {
        List<PhaseSpan> out = new ArrayList<>(children.size());
        for (FragmentSpan c : children) {
            long d = c.endTimeUnixNano() - c.startTimeUnixNano();
            if (d < 0) {
                throw new Rejection(Rejection.INVARIANT_VIOLATED, "phase span " + c.name() + " ends before it starts");
            }
            out.add(new PhaseSpan(c.name(), c.workerRank(), c.startTimeUnixNano(), d));
        }
        out.sort((x, y) -> {
            int c = Long.compare(x.getStartUnixNano(), y.getStartUnixNano());
            if (c != 0) {
                return c;
            }
            return Integer.compare(x.getRank() == null ? -1 : x.getRank(), y.getRank() == null ? -1 : y.getRank());
        });
        return out;
    }

    /** Form B: one step.BATCH_SUMMARY event; latency is filled in when the next step is seen. */
    public static StepRecord.Builder formB(Span.Event event, InstanceIdentity id) {
        String where = BATCH_SUMMARY + " event";
        StepRecord.Builder b = batchSummary(Attributes.of(event.getAttributesList(), where), id, where);
        if (b.getTsStartNs() == null && b.getLatencySource() != LatencySource.EXPLICIT) {
            // the interval to the next step then comes from the events' wall-clock times, which NTP may step
            List<String> degraded = new ArrayList<>(b.getDegraded());
            degraded.add(MISSING_TS);
            b.setDegraded(degraded);
        }
        b.setStartUnixNano(event.getTimeUnixNano());
        if (b.getLatencySource() == LatencySource.EXPLICIT) {
            b.setEndUnixNano(event.getTimeUnixNano() + b.getLatencyNs());
        }
        return b;
    }
}
