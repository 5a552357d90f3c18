package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;

import io.stepline.events.LatencySource;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;
import io.stepline.ingest.validation.Rejection;

/**
 * Maps the step-level payload of seeds/000 §C.2 (form A span attributes or a form B
 * {@code step.BATCH_SUMMARY} event) into a {@link StepRecord}, checking types, required keys
 * and the section's invariants.
 */
public final class StepMapper {
    public static final String STEP_SPAN = "EngineCore::Step";
    public static final String BATCH_SUMMARY = "step.BATCH_SUMMARY";
    public static final Set<String> ENGINE_PHASES = Set.of("EngineCore::Schedule", "EngineCore::Execute", "EngineCore::Output");
    public static final Set<String> RANK_PHASES = Set.of("ModelRunner::Preprocess", "ModelRunner::Forward", "ModelRunner::Sample", "ModelRunner::Postprocess");
    /** An hour: no engine step takes longer; anything above is a broken clock or unit. */
    static final long MAX_STEP_NS = 3_600_000_000_000L;
    private static final HexFormat HEX = HexFormat.of();

    private StepMapper() {}

    public static boolean isPhase(String name) {
        return ENGINE_PHASES.contains(name) || RANK_PHASES.contains(name);
    }

    /** The batch summary of {@code attrs} into a builder (identity and timing left to the caller). */
    public static StepRecord.Builder batchSummary(List<KeyValue> attrs, InstanceIdentity id, String where) {
        Attributes a = Attributes.of(attrs, where);
        StepRecord.Builder b = StepRecord.newBuilder()
                .setInstanceId(id.instanceId()).setRole(id.role())
                .setStepId(a.requireLong("step.id"))
                .setRunningDepth(a.requireInt("queue.running_depth"))
                .setWaitingDepth(a.requireInt("queue.waiting_depth"))
                .setNumPrefillReqs(a.requireInt("batch.num_prefill_reqs"))
                .setNumDecodeReqs(a.requireInt("batch.num_decode_reqs"))
                .setScheduledTokens(a.requireInt("batch.scheduled_tokens"))
                .setPrefillTokens(a.requireInt("batch.prefill_tokens"))
                .setDecodeTokens(a.requireInt("batch.decode_tokens"))
                .setNumFinished(a.requireInt("batch.num_finished"))
                .setNumPreempted(a.requireInt("batch.num_preempted"))
                .setKvUsageGpuRatio(a.requireDouble("kv.usage_gpu_ratio"))
                .setKvBlocksTotalGpu(a.requireLong("kv.blocks_total_gpu"))
                .setKvBlocksFreeGpu(a.requireLong("kv.blocks_free_gpu"))
                .setKvBlocksCpuOffload(a.optLong("kv.blocks_cpu_offload"))
                .setKvBlocksDiskOffload(a.optLong("kv.blocks_disk_offload"))
                .setDecodeContextTokens(a.optLong("batch.decode_context_tokens"))
                .setTsStartNs(a.requireLong("step.ts_start_ns"))
                .setTsEndNs(a.requireLong("step.ts_end_ns"))
                .setDurationUs(a.requireLong("step.duration_us"))
                .setTpSize(id.tp())
                .setLatencyNs(0).setStartUnixNano(0).setEndUnixNano(0);
        Long explicit = a.optLong("step.latency_ns");
        if (explicit == null && a.has("step.latency_us")) {
            explicit = a.requireLong("step.latency_us") * 1000;
        }
        if (explicit != null) {
            if (explicit < 0 || explicit > MAX_STEP_NS) {
                throw new Rejection(Rejection.ABSURD_VALUE, where + ": explicit step latency " + explicit + " ns");
            }
            b.setLatencyNs(explicit).setLatencySource(LatencySource.EXPLICIT);
        }
        checkInvariants(b, where);
        return b;
    }

    static void checkInvariants(StepRecord.Builder b, String where) {
        String w = where + " (step " + b.getStepId() + ")";
        if (b.getStepId() < 0) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": step.id < 0");
        }
        if (b.getDurationUs() < 0 || b.getTsEndNs() < b.getTsStartNs()) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": negative step duration");
        }
        for (int v : new int[] {b.getRunningDepth(), b.getWaitingDepth(), b.getNumPrefillReqs(), b.getNumDecodeReqs(),
                b.getScheduledTokens(), b.getPrefillTokens(), b.getDecodeTokens(), b.getNumFinished(), b.getNumPreempted()}) {
            if (v < 0) {
                throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": a queue or batch count is negative");
            }
        }
        if (b.getNumPrefillReqs() + b.getNumDecodeReqs() > b.getRunningDepth()) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": num_prefill_reqs + num_decode_reqs > running_depth");
        }
        double ratio = b.getKvUsageGpuRatio();
        if (!(ratio >= 0 && ratio <= 1)) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": kv.usage_gpu_ratio " + ratio + " outside [0, 1]");
        }
        if (b.getKvBlocksFreeGpu() < 0 || b.getKvBlocksTotalGpu() < b.getKvBlocksFreeGpu()) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, w + ": kv.blocks_free_gpu outside [0, kv.blocks_total_gpu]");
        }
        // prefill + decode == scheduled is "expected", not required (speculative decoding): only reject the impossible
        if (b.getPrefillTokens() + (long) b.getDecodeTokens() > 4L * Math.max(1, b.getScheduledTokens()) + 1024) {
            throw new Rejection(Rejection.ABSURD_VALUE, w + ": prefill + decode tokens far above scheduled tokens");
        }
    }

    /** Form A: an EngineCore::Step span and the phase spans found for it. */
    public static StepRecord formA(Span step, List<Span> children, InstanceIdentity id) {
        String where = STEP_SPAN + " span " + HEX.formatHex(step.getSpanId().toByteArray());
        StepRecord.Builder b = batchSummary(step.getAttributesList(), id, where);
        long start = step.getStartTimeUnixNano();
        long end = step.getEndTimeUnixNano();
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
        b.setTraceId(HEX.formatHex(step.getTraceId().toByteArray())).setSpanId(HEX.formatHex(step.getSpanId().toByteArray()));
        b.setPhases(phases(children));
        return b.build();
    }

    static List<PhaseSpan> phases(List<Span> children) {
        List<PhaseSpan> out = new ArrayList<>(children.size());
        for (Span c : children) {
            Integer rank = null;
            for (KeyValue kv : c.getAttributesList()) {
                if (kv.getKey().equals("worker.rank") && kv.getValue().hasIntValue()) {
                    rank = (int) kv.getValue().getIntValue();
                }
            }
            long d = c.getEndTimeUnixNano() - c.getStartTimeUnixNano();
            if (d < 0) {
                throw new Rejection(Rejection.INVARIANT_VIOLATED, "phase span " + c.getName() + " ends before it starts");
            }
            out.add(new PhaseSpan(c.getName(), rank, c.getStartTimeUnixNano(), d));
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
        StepRecord.Builder b = batchSummary(event.getAttributesList(), id, BATCH_SUMMARY + " event");
        b.setStartUnixNano(event.getTimeUnixNano());
        if (b.getLatencySource() == LatencySource.EXPLICIT) {
            b.setEndUnixNano(event.getTimeUnixNano() + b.getLatencyNs());
        }
        return b;
    }
}
