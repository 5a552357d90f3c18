package io.stepline.simulator.otlp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.Request;
import io.stepline.simulator.instance.ScheduledBatch;
import io.stepline.simulator.instance.StepOutput;

/**
 * Encodes simulated steps as the OTLP a vLLM with step tracing would export (the brief's input
 * contract). Form A: one {@code EngineCore::Step} span per step with the §C.2 batch-summary
 * attributes and child phase spans; form B: {@code step.BATCH_SUMMARY} events on a
 * {@code scheduler_steps} span (one span per message, i.e. rotated). Either way finished requests
 * get an {@code llm_request} span with {@code gen_ai.*} attributes and their journey events, and
 * sampled steps carry {@code step.REQUEST_SNAPSHOT} events (§C.3). Ids derive from instance and
 * step so the output is deterministic.
 */
public final class StepSpanEncoder {
    public static final String STEP_SCOPE = "vllm.scheduler.step";
    public static final String REQUEST_SCOPE = "vllm.llm_engine";

    private final SimulationConfig.Form form;

    public StepSpanEncoder(SimulationConfig.Form form) {
        this.form = form;
    }

    /** One TracesData holding the given steps (any instances), grouped by instance in first-seen order. */
    public TracesData encode(List<StepOutput> steps) {
        Map<String, List<StepOutput>> byInstance = new LinkedHashMap<>();
        for (StepOutput s : steps) {
            byInstance.computeIfAbsent(s.instanceId(), k -> new ArrayList<>()).add(s);
        }
        TracesData.Builder td = TracesData.newBuilder();
        for (List<StepOutput> group : byInstance.values()) {
            StepOutput first = group.get(0);
            ResourceSpans.Builder rs = td.addResourceSpansBuilder().setResource(resource(first));
            ScopeSpans.Builder stepScope = rs.addScopeSpansBuilder().setScope(InstrumentationScope.newBuilder().setName(STEP_SCOPE));
            ScopeSpans.Builder reqScope = null;
            if (form == SimulationConfig.Form.A) {
                for (StepOutput s : group) {
                    formA(stepScope, s);
                }
            } else {
                formB(stepScope, group);
            }
            for (StepOutput s : group) {
                for (Request r : s.finishedRequests()) {
                    if (reqScope == null) {
                        reqScope = rs.addScopeSpansBuilder().setScope(InstrumentationScope.newBuilder().setName(REQUEST_SCOPE));
                    }
                    reqScope.addSpans(llmRequest(s, r));
                }
            }
        }
        return td.build();
    }

    private static Resource resource(StepOutput s) {
        return Resource.newBuilder()
                .addAttributes(str("service.name", "vllm"))
                .addAttributes(str("service.instance.id", s.instanceId()))
                .addAttributes(str("vllm.instance.role", s.role()))
                .addAttributes(integer("vllm.parallel.tp_size", s.tp()))
                .build();
    }

    private void formA(ScopeSpans.Builder scope, StepOutput s) {
        ByteString traceId = id(16, s.instanceId().hashCode(), s.stepId(), 0);
        ByteString stepSpanId = id(8, s.instanceId().hashCode(), s.stepId(), 1);
        Span.Builder step = Span.newBuilder().setTraceId(traceId).setSpanId(stepSpanId).setName("EngineCore::Step")
                .setKind(Span.SpanKind.SPAN_KIND_INTERNAL).setStartTimeUnixNano(s.startNs()).setEndTimeUnixNano(s.endNs());
        batchSummary(s, step::addAttributes);
        for (StepOutput.RequestSnapshot r : s.snapshots()) {
            step.addEvents(snapshot(s, r));
        }
        scope.addSpans(step);
        int n = 2;
        for (StepOutput.Phase p : s.phases()) {
            Span.Builder child = Span.newBuilder().setTraceId(traceId).setSpanId(id(8, s.instanceId().hashCode(), s.stepId(), n++))
                    .setParentSpanId(stepSpanId).setName(p.name()).setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                    .setStartTimeUnixNano(p.startNs()).setEndTimeUnixNano(p.endNs());
            if (p.rank() != null) {
                child.addAttributes(integer("worker.rank", p.rank()));
            }
            scope.addSpans(child);
        }
    }

    private void formB(ScopeSpans.Builder scope, List<StepOutput> group) {
        StepOutput first = group.get(0);
        StepOutput last = group.get(group.size() - 1);
        Span.Builder span = Span.newBuilder().setTraceId(id(16, first.instanceId().hashCode(), first.stepId(), 7))
                .setSpanId(id(8, first.instanceId().hashCode(), first.stepId(), 7)).setName("scheduler_steps")
                .setKind(Span.SpanKind.SPAN_KIND_INTERNAL).setStartTimeUnixNano(first.startNs()).setEndTimeUnixNano(last.endNs());
        for (StepOutput s : group) {
            Span.Event.Builder ev = Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(s.startNs());
            batchSummary(s, ev::addAttributes);
            span.addEvents(ev);
            for (StepOutput.RequestSnapshot r : s.snapshots()) {
                span.addEvents(snapshot(s, r));
            }
        }
        scope.addSpans(span);
    }

    /** The §C.2 attributes (plus our batch.decode_context_tokens) of a step. */
    private static void batchSummary(StepOutput s, java.util.function.Consumer<KeyValue> add) {
        ScheduledBatch b = s.batch();
        add.accept(integer("step.id", s.stepId()));
        add.accept(integer("step.ts_start_ns", s.monoStartNs()));
        add.accept(integer("step.ts_end_ns", s.scheduleEndMonoNs()));
        add.accept(integer("step.duration_us", (s.scheduleEndMonoNs() - s.monoStartNs()) / 1000));
        add.accept(integer("queue.running_depth", b.runningDepth()));
        add.accept(integer("queue.waiting_depth", b.waitingDepth()));
        add.accept(integer("batch.num_prefill_reqs", b.numPrefillReqs()));
        add.accept(integer("batch.num_decode_reqs", b.numDecodeReqs()));
        add.accept(integer("batch.scheduled_tokens", b.scheduledTotal()));
        add.accept(integer("batch.prefill_tokens", b.prefillTokens()));
        add.accept(integer("batch.decode_tokens", b.decodeTokens()));
        add.accept(integer("batch.num_finished", s.numFinished()));
        add.accept(integer("batch.num_preempted", b.preempted().size()));
        add.accept(dbl("kv.usage_gpu_ratio", s.kvUsage()));
        add.accept(integer("kv.blocks_total_gpu", s.kvBlocksTotal()));
        add.accept(integer("kv.blocks_free_gpu", s.kvBlocksFree()));
        add.accept(integer("batch.decode_context_tokens", b.decodeContextTokens()));
    }

    private static Span.Event snapshot(StepOutput s, StepOutput.RequestSnapshot r) {
        return Span.Event.newBuilder().setName("step.REQUEST_SNAPSHOT").setTimeUnixNano(s.startNs())
                .addAttributes(integer("step.id", s.stepId()))
                .addAttributes(str("request.id", r.requestId()))
                .addAttributes(str("request.phase", r.prefill() ? "PREFILL" : "DECODE"))
                .addAttributes(integer("request.num_prompt_tokens", r.promptTokens()))
                .addAttributes(integer("request.num_computed_tokens", r.computedTokens()))
                .addAttributes(integer("request.num_output_tokens", r.outputTokens()))
                .addAttributes(integer("request.num_preemptions", r.preemptions()))
                .addAttributes(integer("request.scheduled_tokens_this_step", r.scheduledTokens()))
                .addAttributes(integer("kv.blocks_allocated_gpu", r.blocksAllocated()))
                .addAttributes(integer("kv.blocks_cached_gpu", r.blocksCached()))
                .addAttributes(integer("request.max_tokens", r.maxTokens()))
                .build();
    }

    private static Span llmRequest(StepOutput s, Request r) {
        long start = s.endNs() - Math.round((r.finishedS - r.arrivalS) * 1e9);
        Span.Builder b = Span.newBuilder().setTraceId(id(16, r.id.hashCode(), 0, 3)).setSpanId(id(8, r.id.hashCode(), 0, 3))
                .setName("llm_request").setKind(Span.SpanKind.SPAN_KIND_SERVER)
                .setStartTimeUnixNano(start).setEndTimeUnixNano(s.endNs())
                .addAttributes(str("gen_ai.request.id", r.id))
                .addAttributes(str("gen_ai.response.model", "meta-llama/Llama-2-7b-hf"))
                .addAttributes(integer("gen_ai.request.max_tokens", r.outputTokens))
                .addAttributes(integer("gen_ai.usage.prompt_tokens", r.promptTokens))
                .addAttributes(integer("gen_ai.usage.completion_tokens", r.outputDone()))
                .addAttributes(dbl("gen_ai.latency.time_in_queue", Math.max(0, r.firstScheduledS - r.queuedS)))
                .addAttributes(dbl("gen_ai.latency.time_to_first_token", r.firstTokenS - r.arrivalS))
                .addAttributes(dbl("gen_ai.latency.e2e", r.finishedS - r.arrivalS))
                .addAttributes(dbl("gen_ai.latency.time_in_model_prefill", Math.max(0, r.firstTokenS - r.firstScheduledS)))
                .addAttributes(dbl("gen_ai.latency.time_in_model_decode", r.finishedS - r.firstTokenS));
        for (StepOutput.JourneyEvent j : r.journey) {
            Span.Event.Builder ev = Span.Event.newBuilder().setName("journey." + j.type()).setTimeUnixNano(j.timeNs())
                    .addAttributes(str("event.type", j.type()))
                    .addAttributes(dbl("ts.monotonic", j.monoNs() / 1e9))
                    .addAttributes(integer("ts.monotonic_ns", j.monoNs()))
                    .addAttributes(str("phase", j.phase()))
                    .addAttributes(integer("prefill.done_tokens", j.prefillDone()))
                    .addAttributes(integer("prefill.total_tokens", r.promptTokens))
                    .addAttributes(integer("decode.done_tokens", j.decodeDone()))
                    .addAttributes(integer("decode.max_tokens", r.outputTokens))
                    .addAttributes(integer("num_preemptions", j.preemptions()));
            if (j.stepId() >= 0) {
                ev.addAttributes(integer("scheduler.step", j.stepId()));
            }
            if (j.scheduleKind() != null) {
                ev.addAttributes(str("schedule.kind", j.scheduleKind()));
            }
            if (j.type().equals("FINISHED")) {
                ev.addAttributes(str("finish.status", "length"));
            }
            b.addEvents(ev);
        }
        return b.build();
    }

    static KeyValue str(String k, String v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setStringValue(v)).build();
    }

    static KeyValue integer(String k, long v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setIntValue(v)).build();
    }

    static KeyValue dbl(String k, double v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setDoubleValue(v)).build();
    }

    /** A deterministic, non-zero id of {@code len} bytes from (a, b, c). */
    static ByteString id(int len, long a, long b, long c) {
        byte[] out = new byte[len];
        long x = a * 0x9E3779B97F4A7C15L ^ b * 0xC2B2AE3D27D4EB4FL ^ c * 0x165667B19E3779F9L;
        for (int i = 0; i < len; i++) {
            x ^= x >>> 33;
            x *= 0xFF51AFD7ED558CCDL;
            x ^= x >>> 29;
            out[i] = (byte) x;
        }
        out[0] |= 1;
        return ByteString.copyFrom(out);
    }
}
