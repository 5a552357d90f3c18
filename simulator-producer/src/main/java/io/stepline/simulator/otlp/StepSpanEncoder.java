package io.stepline.simulator.otlp;

import static io.stepline.schemas.otlp.OtlpFields.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.trace.v1.TracesData;

import io.stepline.schemas.otlp.RequestAttributes;
import io.stepline.schemas.otlp.StepAttributes;
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
 *
 * <p>The message is written directly in the protobuf wire format ({@link ProtoWriter}), byte for
 * byte what protobuf-java would serialise from the same TracesData, because the simulator must
 * outrun the fleet it imitates. An encoder is not thread-safe: it reuses one buffer.
 */
public final class StepSpanEncoder {
    public static final String STEP_SCOPE = StepAttributes.STEP_SCOPE;
    public static final String REQUEST_SCOPE = StepAttributes.REQUEST_SCOPE;

    // field numbers: io.stepline.schemas.otlp.OtlpFields, shared with ingest's reader

    // attribute keys as the bytes of their KeyValue.key field, and span/event names, encoded once
    private static final byte[] K_SERVICE_NAME = keyField(StepAttributes.SERVICE_NAME);
    private static final byte[] K_SERVICE_INSTANCE_ID = keyField(StepAttributes.SERVICE_INSTANCE_ID);
    private static final byte[] K_VLLM_INSTANCE_ROLE = keyField(StepAttributes.VLLM_INSTANCE_ROLE);
    private static final byte[] K_VLLM_PARALLEL_TP_SIZE = keyField(StepAttributes.VLLM_PARALLEL_TP_SIZE);
    private static final byte[] K_WORKER_RANK = keyField(StepAttributes.WORKER_RANK);
    private static final byte[] K_STEP_ID = keyField(StepAttributes.STEP_ID);
    private static final byte[] K_STEP_TS_START_NS = keyField(StepAttributes.STEP_TS_START_NS);
    private static final byte[] K_STEP_TS_END_NS = keyField(StepAttributes.STEP_TS_END_NS);
    private static final byte[] K_STEP_DURATION_US = keyField(StepAttributes.STEP_DURATION_US);
    private static final byte[] K_QUEUE_RUNNING_DEPTH = keyField(StepAttributes.QUEUE_RUNNING_DEPTH);
    private static final byte[] K_QUEUE_WAITING_DEPTH = keyField(StepAttributes.QUEUE_WAITING_DEPTH);
    private static final byte[] K_BATCH_NUM_PREFILL_REQS = keyField(StepAttributes.BATCH_NUM_PREFILL_REQS);
    private static final byte[] K_BATCH_NUM_DECODE_REQS = keyField(StepAttributes.BATCH_NUM_DECODE_REQS);
    private static final byte[] K_BATCH_SCHEDULED_TOKENS = keyField(StepAttributes.BATCH_SCHEDULED_TOKENS);
    private static final byte[] K_BATCH_PREFILL_TOKENS = keyField(StepAttributes.BATCH_PREFILL_TOKENS);
    private static final byte[] K_BATCH_DECODE_TOKENS = keyField(StepAttributes.BATCH_DECODE_TOKENS);
    private static final byte[] K_BATCH_NUM_FINISHED = keyField(StepAttributes.BATCH_NUM_FINISHED);
    private static final byte[] K_BATCH_NUM_PREEMPTED = keyField(StepAttributes.BATCH_NUM_PREEMPTED);
    private static final byte[] K_KV_USAGE_GPU_RATIO = keyField(StepAttributes.KV_USAGE_GPU_RATIO);
    private static final byte[] K_KV_BLOCKS_TOTAL_GPU = keyField(StepAttributes.KV_BLOCKS_TOTAL_GPU);
    private static final byte[] K_KV_BLOCKS_FREE_GPU = keyField(StepAttributes.KV_BLOCKS_FREE_GPU);
    private static final byte[] K_BATCH_DECODE_CONTEXT_TOKENS = keyField(StepAttributes.BATCH_DECODE_CONTEXT_TOKENS);
    private static final byte[] K_REQUEST_ID = keyField(RequestAttributes.REQUEST_ID);
    private static final byte[] K_REQUEST_PHASE = keyField(RequestAttributes.REQUEST_PHASE);
    private static final byte[] K_REQUEST_NUM_PROMPT_TOKENS = keyField(RequestAttributes.REQUEST_NUM_PROMPT_TOKENS);
    private static final byte[] K_REQUEST_NUM_COMPUTED_TOKENS = keyField(RequestAttributes.REQUEST_NUM_COMPUTED_TOKENS);
    private static final byte[] K_REQUEST_NUM_OUTPUT_TOKENS = keyField(RequestAttributes.REQUEST_NUM_OUTPUT_TOKENS);
    private static final byte[] K_REQUEST_NUM_PREEMPTIONS = keyField(RequestAttributes.REQUEST_NUM_PREEMPTIONS);
    private static final byte[] K_REQUEST_SCHEDULED_TOKENS_THIS_STEP = keyField(RequestAttributes.REQUEST_SCHEDULED_TOKENS_THIS_STEP);
    private static final byte[] K_KV_BLOCKS_ALLOCATED_GPU = keyField(RequestAttributes.KV_BLOCKS_ALLOCATED_GPU);
    private static final byte[] K_KV_BLOCKS_CACHED_GPU = keyField(RequestAttributes.KV_BLOCKS_CACHED_GPU);
    private static final byte[] K_REQUEST_MAX_TOKENS = keyField(RequestAttributes.REQUEST_MAX_TOKENS);
    private static final byte[] K_GEN_AI_REQUEST_ID = keyField(RequestAttributes.GEN_AI_REQUEST_ID);
    private static final byte[] K_GEN_AI_RESPONSE_MODEL = keyField(RequestAttributes.GEN_AI_RESPONSE_MODEL);
    private static final byte[] K_GEN_AI_REQUEST_MAX_TOKENS = keyField(RequestAttributes.GEN_AI_REQUEST_MAX_TOKENS);
    private static final byte[] K_GEN_AI_USAGE_PROMPT_TOKENS = keyField(RequestAttributes.GEN_AI_USAGE_PROMPT_TOKENS);
    private static final byte[] K_GEN_AI_USAGE_COMPLETION_TOKENS = keyField(RequestAttributes.GEN_AI_USAGE_COMPLETION_TOKENS);
    private static final byte[] K_GEN_AI_LATENCY_TIME_IN_QUEUE = keyField(RequestAttributes.GEN_AI_LATENCY_TIME_IN_QUEUE);
    private static final byte[] K_GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN = keyField(RequestAttributes.GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN);
    private static final byte[] K_GEN_AI_LATENCY_E2E = keyField(RequestAttributes.GEN_AI_LATENCY_E2E);
    private static final byte[] K_GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL = keyField(RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL);
    private static final byte[] K_GEN_AI_LATENCY_TIME_IN_MODEL_DECODE = keyField(RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_DECODE);
    private static final byte[] K_EVENT_TYPE = keyField(RequestAttributes.EVENT_TYPE);
    private static final byte[] K_TS_MONOTONIC = keyField(RequestAttributes.TS_MONOTONIC);
    private static final byte[] K_TS_MONOTONIC_NS = keyField(RequestAttributes.TS_MONOTONIC_NS);
    private static final byte[] K_PHASE = keyField(RequestAttributes.JOURNEY_PHASE);
    private static final byte[] K_PREFILL_DONE_TOKENS = keyField(RequestAttributes.PREFILL_DONE_TOKENS);
    private static final byte[] K_PREFILL_TOTAL_TOKENS = keyField(RequestAttributes.PREFILL_TOTAL_TOKENS);
    private static final byte[] K_DECODE_DONE_TOKENS = keyField(RequestAttributes.DECODE_DONE_TOKENS);
    private static final byte[] K_DECODE_MAX_TOKENS = keyField(RequestAttributes.DECODE_MAX_TOKENS);
    private static final byte[] K_NUM_PREEMPTIONS = keyField(RequestAttributes.JOURNEY_NUM_PREEMPTIONS);
    private static final byte[] K_SCHEDULER_STEP = keyField(RequestAttributes.SCHEDULER_STEP);
    private static final byte[] K_SCHEDULE_KIND = keyField(RequestAttributes.SCHEDULE_KIND);
    private static final byte[] K_FINISH_STATUS = keyField(RequestAttributes.FINISH_STATUS);
    private static final byte[] N_STEP_BATCH_SUMMARY = ProtoWriter.utf8(StepAttributes.BATCH_SUMMARY);
    private static final byte[] N_STEP_REQUEST_SNAPSHOT = ProtoWriter.utf8(StepAttributes.REQUEST_SNAPSHOT);
    private static final byte[] N_ENGINECORE__STEP = ProtoWriter.utf8(StepAttributes.STEP_SPAN);
    private static final byte[] N_SCHEDULER_STEPS = ProtoWriter.utf8(StepAttributes.SCHEDULER_STEPS_SPAN);
    private static final byte[] N_LLM_REQUEST = ProtoWriter.utf8(StepAttributes.LLM_REQUEST_SPAN);

    private final SimulationConfig.Form form;
    private final ProtoWriter out = new ProtoWriter(1 << 16);
    /** UTF-8 of recurring strings that are not constants here (phase names, instance ids, roles). */
    private final Map<String, byte[]> utf8 = new HashMap<>();
    private final String[] phaseNames = new String[16];
    private final byte[][] phaseNameBytes = new byte[16][];
    private final byte[] id16 = new byte[16];
    private final byte[] id8 = new byte[8];
    private final byte[] parent8 = new byte[8];

    public StepSpanEncoder(SimulationConfig.Form form) {
        this.form = form;
    }

    /** One TracesData message (protobuf bytes) holding the given steps (any instances), grouped by instance in first-seen order. */
    public byte[] encodeBytes(List<StepOutput> steps) {
        Map<String, List<StepOutput>> byInstance = new LinkedHashMap<>();
        for (StepOutput s : steps) {
            byInstance.computeIfAbsent(s.instanceId(), k -> new ArrayList<>()).add(s);
        }
        out.reset();
        for (List<StepOutput> group : byInstance.values()) {
            StepOutput first = group.get(0);
            int rs = out.begin(TRACES_DATA_RESOURCE_SPANS, 3);
            resource(first);
            int scope = beginScope(STEP_SCOPE);
            if (form == SimulationConfig.Form.A) {
                for (StepOutput s : group) {
                    formA(s);
                }
            } else {
                formB(group);
            }
            out.end(scope);
            scope = -1;
            for (StepOutput s : group) {
                for (Request r : s.finishedRequests()) {
                    if (scope < 0) {
                        scope = beginScope(REQUEST_SCOPE);
                    }
                    llmRequest(s, r);
                }
            }
            if (scope >= 0) {
                out.end(scope);
            }
            out.end(rs);
        }
        return out.toByteArray();
    }

    /** The same message as protobuf-java objects (for the OTLP/JSON form, which is written from them). */
    public TracesData encode(List<StepOutput> steps) {
        try {
            return TracesData.parseFrom(encodeBytes(steps));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("the span encoder wrote a message protobuf cannot read", e);
        }
    }

    private int beginScope(String name) {
        int scope = out.begin(RESOURCE_SPANS_SCOPE_SPANS, 3);
        int is = out.begin(SCOPE_SPANS_SCOPE);
        out.bytesField(SCOPE_NAME, bytes(name));
        out.end(is);
        return scope;
    }

    private void resource(StepOutput s) {
        int res = out.begin(RESOURCE_SPANS_RESOURCE);
        str(RESOURCE_ATTRIBUTES, K_SERVICE_NAME, "vllm");
        str(RESOURCE_ATTRIBUTES, K_SERVICE_INSTANCE_ID, s.instanceId());
        str(RESOURCE_ATTRIBUTES, K_VLLM_INSTANCE_ROLE, s.role());
        integer(RESOURCE_ATTRIBUTES, K_VLLM_PARALLEL_TP_SIZE, s.tp());
        out.end(res);
    }

    private void formA(StepOutput s) {
        int inst = s.instanceId().hashCode();
        id(id16, inst, s.stepId(), 0);
        id(parent8, inst, s.stepId(), 1);
        int span = out.begin(SCOPE_SPANS_SPANS, 2);
        spanHeader(id16, parent8, null, N_ENGINECORE__STEP, SPAN_KIND_INTERNAL, s.startNs(), s.endNs());
        batchSummary(SPAN_ATTRIBUTES, s);
        for (StepOutput.RequestSnapshot r : s.snapshots()) {
            snapshot(s, r);
        }
        out.end(span);
        int n = 2;
        for (StepOutput.Phase p : s.phases()) {
            id(id8, inst, s.stepId(), n++);
            int child = out.begin(SCOPE_SPANS_SPANS);
            spanHeader(id16, id8, parent8, phaseName(p.name()), SPAN_KIND_INTERNAL, p.startNs(), p.endNs());
            if (p.rank() != null) {
                integer(SPAN_ATTRIBUTES, K_WORKER_RANK, p.rank());
            }
            out.end(child);
        }
    }

    private void formB(List<StepOutput> group) {
        StepOutput first = group.get(0);
        StepOutput last = group.get(group.size() - 1);
        int inst = first.instanceId().hashCode();
        id(id16, inst, first.stepId(), 7);
        id(id8, inst, first.stepId(), 7);
        int span = out.begin(SCOPE_SPANS_SPANS, 3);
        spanHeader(id16, id8, null, N_SCHEDULER_STEPS, SPAN_KIND_INTERNAL, first.startNs(), last.endNs());
        for (StepOutput s : group) {
            int ev = out.begin(SPAN_EVENTS, 2);
            out.fixed64Field(EVENT_TIME_UNIX_NANO, s.startNs());
            out.bytesField(EVENT_NAME, N_STEP_BATCH_SUMMARY);
            batchSummary(EVENT_ATTRIBUTES, s);
            out.end(ev);
            for (StepOutput.RequestSnapshot r : s.snapshots()) {
                snapshot(s, r);
            }
        }
        out.end(span);
    }

    /** Span fields 1 to 8 (trace state left empty). */
    private void spanHeader(byte[] traceId, byte[] spanId, byte[] parentId, byte[] name, int kind, long startNs, long endNs) {
        out.bytesField(SPAN_TRACE_ID, traceId);
        out.bytesField(SPAN_SPAN_ID, spanId);
        if (parentId != null) {
            out.bytesField(SPAN_PARENT_SPAN_ID, parentId);
        }
        out.bytesField(SPAN_NAME, name);
        out.varintField(SPAN_KIND, kind);
        out.fixed64Field(SPAN_START_TIME_UNIX_NANO, startNs);
        out.fixed64Field(SPAN_END_TIME_UNIX_NANO, endNs);
    }

    /** The §C.2 attributes (plus our batch.decode_context_tokens) of a step. */
    private void batchSummary(int field, StepOutput s) {
        ScheduledBatch b = s.batch();
        integer(field, K_STEP_ID, s.stepId());
        integer(field, K_STEP_TS_START_NS, s.monoStartNs());
        integer(field, K_STEP_TS_END_NS, s.scheduleEndMonoNs());
        integer(field, K_STEP_DURATION_US, (s.scheduleEndMonoNs() - s.monoStartNs()) / 1000);
        integer(field, K_QUEUE_RUNNING_DEPTH, b.runningDepth());
        integer(field, K_QUEUE_WAITING_DEPTH, b.waitingDepth());
        integer(field, K_BATCH_NUM_PREFILL_REQS, b.numPrefillReqs());
        integer(field, K_BATCH_NUM_DECODE_REQS, b.numDecodeReqs());
        integer(field, K_BATCH_SCHEDULED_TOKENS, b.scheduledTotal());
        integer(field, K_BATCH_PREFILL_TOKENS, b.prefillTokens());
        integer(field, K_BATCH_DECODE_TOKENS, b.decodeTokens());
        integer(field, K_BATCH_NUM_FINISHED, s.numFinished());
        integer(field, K_BATCH_NUM_PREEMPTED, b.preempted().size());
        dbl(field, K_KV_USAGE_GPU_RATIO, s.kvUsage());
        integer(field, K_KV_BLOCKS_TOTAL_GPU, s.kvBlocksTotal());
        integer(field, K_KV_BLOCKS_FREE_GPU, s.kvBlocksFree());
        integer(field, K_BATCH_DECODE_CONTEXT_TOKENS, b.decodeContextTokens());
    }

    private void snapshot(StepOutput s, StepOutput.RequestSnapshot r) {
        int ev = out.begin(SPAN_EVENTS, 2);
        out.fixed64Field(EVENT_TIME_UNIX_NANO, s.startNs());
        out.bytesField(EVENT_NAME, N_STEP_REQUEST_SNAPSHOT);
        integer(EVENT_ATTRIBUTES, K_STEP_ID, s.stepId());
        str(EVENT_ATTRIBUTES, K_REQUEST_ID, ProtoWriter.utf8(r.requestId()));
        str(EVENT_ATTRIBUTES, K_REQUEST_PHASE, r.prefill() ? "PREFILL" : "DECODE");
        integer(EVENT_ATTRIBUTES, K_REQUEST_NUM_PROMPT_TOKENS, r.promptTokens());
        integer(EVENT_ATTRIBUTES, K_REQUEST_NUM_COMPUTED_TOKENS, r.computedTokens());
        integer(EVENT_ATTRIBUTES, K_REQUEST_NUM_OUTPUT_TOKENS, r.outputTokens());
        integer(EVENT_ATTRIBUTES, K_REQUEST_NUM_PREEMPTIONS, r.preemptions());
        integer(EVENT_ATTRIBUTES, K_REQUEST_SCHEDULED_TOKENS_THIS_STEP, r.scheduledTokens());
        integer(EVENT_ATTRIBUTES, K_KV_BLOCKS_ALLOCATED_GPU, r.blocksAllocated());
        integer(EVENT_ATTRIBUTES, K_KV_BLOCKS_CACHED_GPU, r.blocksCached());
        integer(EVENT_ATTRIBUTES, K_REQUEST_MAX_TOKENS, r.maxTokens());
        out.end(ev);
    }

    private void llmRequest(StepOutput s, Request r) {
        long start = s.endNs() - Math.round((r.finishedS - r.arrivalS) * 1e9);
        int h = r.id.hashCode();
        id(id16, h, 0, 3);
        id(id8, h, 0, 3);
        int span = out.begin(SCOPE_SPANS_SPANS, 2);
        spanHeader(id16, id8, null, N_LLM_REQUEST, SPAN_KIND_SERVER, start, s.endNs());
        str(SPAN_ATTRIBUTES, K_GEN_AI_REQUEST_ID, ProtoWriter.utf8(r.id));
        str(SPAN_ATTRIBUTES, K_GEN_AI_RESPONSE_MODEL, "meta-llama/Llama-2-7b-hf");
        integer(SPAN_ATTRIBUTES, K_GEN_AI_REQUEST_MAX_TOKENS, r.outputTokens);
        integer(SPAN_ATTRIBUTES, K_GEN_AI_USAGE_PROMPT_TOKENS, r.promptTokens);
        integer(SPAN_ATTRIBUTES, K_GEN_AI_USAGE_COMPLETION_TOKENS, r.outputDone());
        dbl(SPAN_ATTRIBUTES, K_GEN_AI_LATENCY_TIME_IN_QUEUE, Math.max(0, r.firstScheduledS - r.queuedS));
        dbl(SPAN_ATTRIBUTES, K_GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN, r.firstTokenS - r.arrivalS);
        dbl(SPAN_ATTRIBUTES, K_GEN_AI_LATENCY_E2E, r.finishedS - r.arrivalS);
        dbl(SPAN_ATTRIBUTES, K_GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL, Math.max(0, r.firstTokenS - r.firstScheduledS));
        dbl(SPAN_ATTRIBUTES, K_GEN_AI_LATENCY_TIME_IN_MODEL_DECODE, r.finishedS - r.firstTokenS);
        for (StepOutput.JourneyEvent j : r.journey) {
            int ev = out.begin(SPAN_EVENTS, 2);
            out.fixed64Field(EVENT_TIME_UNIX_NANO, j.timeNs());
            out.bytesField(EVENT_NAME, bytes(StepAttributes.JOURNEY_PREFIX + j.type()));
            str(EVENT_ATTRIBUTES, K_EVENT_TYPE, j.type());
            dbl(EVENT_ATTRIBUTES, K_TS_MONOTONIC, j.monoNs() / 1e9);
            integer(EVENT_ATTRIBUTES, K_TS_MONOTONIC_NS, j.monoNs());
            str(EVENT_ATTRIBUTES, K_PHASE, j.phase());
            integer(EVENT_ATTRIBUTES, K_PREFILL_DONE_TOKENS, j.prefillDone());
            integer(EVENT_ATTRIBUTES, K_PREFILL_TOTAL_TOKENS, r.promptTokens);
            integer(EVENT_ATTRIBUTES, K_DECODE_DONE_TOKENS, j.decodeDone());
            integer(EVENT_ATTRIBUTES, K_DECODE_MAX_TOKENS, r.outputTokens);
            integer(EVENT_ATTRIBUTES, K_NUM_PREEMPTIONS, j.preemptions());
            if (j.stepId() >= 0) {
                integer(EVENT_ATTRIBUTES, K_SCHEDULER_STEP, j.stepId());
            }
            if (j.scheduleKind() != null) {
                str(EVENT_ATTRIBUTES, K_SCHEDULE_KIND, j.scheduleKind());
            }
            if (j.type().equals("FINISHED")) {
                str(EVENT_ATTRIBUTES, K_FINISH_STATUS, "length");
            }
            out.end(ev);
        }
        out.end(span);
    }

    /** A KeyValue with an int_value; its length is known up front, so nothing moves. */
    private void integer(int field, byte[] k, long v) {
        int any = 1 + ProtoWriter.varintSize(v);
        kvHeader(field, k, any);
        out.tag(ANY_INT, ProtoWriter.VARINT);
        out.varint(v);
    }

    private void dbl(int field, byte[] k, double v) {
        kvHeader(field, k, 9);
        out.tag(ANY_DOUBLE, ProtoWriter.FIXED64);
        out.fixed64(Double.doubleToRawLongBits(v));
    }

    /** A KeyValue with a string_value from the simulator's recurring strings (names, ids of instances, phases). */
    private void str(int field, byte[] k, String v) {
        str(field, k, bytes(v));
    }

    private void str(int field, byte[] k, byte[] b) {
        kvHeader(field, k, 1 + ProtoWriter.varintSize(b.length) + b.length);
        // a oneof member is written even when empty
        out.tag(ANY_STRING, ProtoWriter.LEN);
        out.varint(b.length);
        out.raw(b);
    }

    private void kvHeader(int field, byte[] keyField, int anyLen) {
        int kvLen = keyField.length + 1 + ProtoWriter.varintSize(anyLen) + anyLen;
        out.tag(field, ProtoWriter.LEN);
        out.varint(kvLen);
        out.raw(keyField);
        out.tag(KEY_VALUE_VALUE, ProtoWriter.LEN);
        out.varint(anyLen);
    }

    /** The KeyValue.key field (tag, length, UTF-8) of an attribute key. */
    private static byte[] keyField(String key) {
        ProtoWriter w = new ProtoWriter(key.length() + 8);
        w.stringField(KEY_VALUE_KEY, key);
        return w.toByteArray();
    }

    /** UTF-8 of the simulator's recurring strings (span and event names, instance ids, roles, phases); request ids are not kept. */
    private byte[] bytes(String s) {
        return utf8.computeIfAbsent(s, ProtoWriter::utf8);
    }

    /**
     * A phase name's UTF-8: the executor names phases with the same few constants, so the same
     * String objects come back step after step and a scan by identity beats hashing.
     */
    private byte[] phaseName(String name) {
        for (int i = 0; i < phaseNames.length && phaseNames[i] != null; i++) {
            if (phaseNames[i] == name) {
                return phaseNameBytes[i];
            }
        }
        byte[] b = bytes(name);
        for (int i = 0; i < phaseNames.length; i++) {
            if (phaseNames[i] == null) {
                phaseNames[i] = name;
                phaseNameBytes[i] = b;
                break;
            }
        }
        return b;
    }

    /** Fills {@code out} with a deterministic, non-zero id from (a, b, c). */
    static void id(byte[] out, long a, long b, long c) {
        long x = a * 0x9E3779B97F4A7C15L ^ b * 0xC2B2AE3D27D4EB4FL ^ c * 0x165667B19E3779F9L;
        for (int i = 0; i < out.length; i++) {
            x ^= x >>> 33;
            x *= 0xFF51AFD7ED558CCDL;
            x ^= x >>> 29;
            out[i] = (byte) x;
        }
        out[0] |= 1;
    }
}
