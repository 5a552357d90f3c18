package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.opentelemetry.proto.trace.v1.Span;

import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.otlp.RequestAttributes;
import io.stepline.schemas.otlp.StepAttributes;

/**
 * Request-level events, from both vLLMs:
 * <ul>
 * <li>the step-tracing fork's engine side: {@code journey.QUEUED|SCHEDULED|FIRST_TOKEN|PREEMPTED|FINISHED}
 * events on an {@code llm_core} span (scope {@code vllm.scheduler}, request id in the span's
 * {@code gen_ai.request.id}) with {@code ts.monotonic_ns}, {@code scheduler.step} (the step
 * they happened in; 0 before the first step), {@code phase} and the progress counters;</li>
 * <li>its API side: an {@code llm_request} span (scope {@code vllm.api}) with
 * {@code gen_ai.request.id}, {@code gen_ai.usage.*} and {@code api.ARRIVED|HANDOFF_TO_CORE|DEPARTED|ABORTED}
 * events carrying {@code event.ts.monotonic} (seconds), and {@code reason}/{@code error} on ABORTED;</li>
 * <li>{@code step.REQUEST_SNAPSHOT} events (docs/INPUT.md, "Request events");</li>
 * <li>upstream vLLM's {@code llm_request} span: {@code gen_ai.request.id}, {@code gen_ai.usage.*},
 * {@code gen_ai.latency.time_to_first_token|e2e|time_in_queue|time_in_model_prefill|time_in_model_decode|time_in_model_inference}
 * (seconds) and {@code gen_ai.response.finish_reasons} (a JSON list in a string).</li>
 * </ul>
 */
public final class RequestMapper {
    public static final String SNAPSHOT = StepAttributes.REQUEST_SNAPSHOT;
    public static final String LLM_REQUEST = StepAttributes.LLM_REQUEST_SPAN;
    public static final String JOURNEY_PREFIX = io.stepline.schemas.otlp.StepAttributes.JOURNEY_PREFIX;
    /** The fork's API-side events on its llm_request span (other events there, and api.* events elsewhere, are not request events). */
    static final Map<String, RequestEventKind> API_EVENTS = Map.of("api.ARRIVED", RequestEventKind.API_ARRIVED,
            "api.HANDOFF_TO_CORE", RequestEventKind.API_HANDOFF_TO_CORE, "api.DEPARTED", RequestEventKind.API_DEPARTED,
            "api.ABORTED", RequestEventKind.API_ABORTED);

    private RequestMapper() {}

    public static boolean isRequestEvent(String eventName) {
        return eventName.equals(SNAPSHOT) || eventName.startsWith(JOURNEY_PREFIX) || API_EVENTS.containsKey(eventName);
    }

    public static RequestEvent snapshot(Span.Event e, InstanceIdentity id) {
        Attributes a = Attributes.of(e.getAttributesList(), SNAPSHOT + " event");
        String phase = a.requireString(RequestAttributes.REQUEST_PHASE);
        if (!phase.equals("PREFILL") && !phase.equals("DECODE")) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, SNAPSHOT + ": request.phase must be PREFILL or DECODE, got '" + phase + "'");
        }
        RequestEvent r = RequestEvent.newBuilder().setInstanceId(id.instanceId()).setKind(RequestEventKind.SNAPSHOT)
                .setRequestId(a.requireString(RequestAttributes.REQUEST_ID)).setTimeUnixNano(e.getTimeUnixNano())
                .setStepId(a.requireLong(StepAttributes.STEP_ID)).setPhase(phase)
                .setNumPromptTokens(a.requireInt(RequestAttributes.REQUEST_NUM_PROMPT_TOKENS))
                .setNumComputedTokens(a.requireInt(RequestAttributes.REQUEST_NUM_COMPUTED_TOKENS))
                .setNumOutputTokens(a.requireInt(RequestAttributes.REQUEST_NUM_OUTPUT_TOKENS))
                .setNumPreemptions(a.requireInt(RequestAttributes.REQUEST_NUM_PREEMPTIONS))
                .setScheduledTokensThisStep(a.requireInt(RequestAttributes.REQUEST_SCHEDULED_TOKENS_THIS_STEP))
                .setKvBlocksAllocatedGpu(a.requireInt(RequestAttributes.KV_BLOCKS_ALLOCATED_GPU))
                .setKvBlocksCachedGpu(a.requireInt(RequestAttributes.KV_BLOCKS_CACHED_GPU))
                .setKvBlocksCpuOffload(a.optInt(StepAttributes.KV_BLOCKS_CPU_OFFLOAD))
                .setKvBlocksDiskOffload(a.optInt(StepAttributes.KV_BLOCKS_DISK_OFFLOAD))
                .setMaxTokens(a.optInt(RequestAttributes.REQUEST_MAX_TOKENS))
                .setEffectivePromptLen(a.optInt(RequestAttributes.REQUEST_EFFECTIVE_PROMPT_LEN))
                .build();
        if (r.getNumOutputTokens() < 0 || r.getNumPreemptions() < 0 || r.getKvBlocksAllocatedGpu() < 0) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, SNAPSHOT + " " + r.getRequestId() + ": negative counter");
        }
        if (r.getKvBlocksAllocatedGpu() < r.getKvBlocksCachedGpu()) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, SNAPSHOT + " " + r.getRequestId() + ": kv.blocks_allocated_gpu < kv.blocks_cached_gpu");
        }
        // §C.3's computed >= prompt + output can only hold once the prompt is done (and resets on preemption)
        if (phase.equals("DECODE") && r.getNumComputedTokens() < r.getNumPromptTokens() + r.getNumOutputTokens() - 1) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, SNAPSHOT + " " + r.getRequestId()
                    + ": DECODE with num_computed_tokens < num_prompt_tokens + num_output_tokens");
        }
        return r;
    }

    public static RequestEvent journey(Span.Event e, Span span, InstanceIdentity id) {
        String type = e.getName().substring(JOURNEY_PREFIX.length());
        RequestEventKind kind;
        try {
            kind = RequestEventKind.valueOf(type.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException ex) {
            kind = null;
        }
        if (kind == null || kind == RequestEventKind.SNAPSHOT || kind == RequestEventKind.LLM_REQUEST) {
            throw new Rejection(Rejection.ABSURD_VALUE, "unknown journey event " + e.getName());
        }
        Attributes a = Attributes.of(e.getAttributesList(), e.getName() + " event");
        Attributes spanAttrs = Attributes.of(span.getAttributesList(), span.getName() + " span");
        String requestId = firstNonNull(a.optString(RequestAttributes.REQUEST_ID), spanAttrs.optString(RequestAttributes.GEN_AI_REQUEST_ID), spanAttrs.optString(RequestAttributes.REQUEST_ID));
        if (requestId == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, e.getName() + ": no request id on the event or its span");
        }
        Long mono = a.optLong(RequestAttributes.TS_MONOTONIC_NS);
        if (mono == null && a.has(RequestAttributes.TS_MONOTONIC)) {
            mono = Math.round(a.requireDouble(RequestAttributes.TS_MONOTONIC) * 1e9);
        }
        Map<String, String> rest = a.asStrings();
        Long step = a.optLong(RequestAttributes.SCHEDULER_STEP);
        return RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId).setKind(kind)
                .setTimeUnixNano(e.getTimeUnixNano()).setTsMonotonicNs(mono)
                .setStepId(step == null || step <= 0 ? null : step) // the fork's counter starts at 1: 0 means before any step
                .setPhase(a.optString("phase"))
                .setNumPromptTokens(a.optInt(RequestAttributes.PREFILL_TOTAL_TOKENS))
                .setNumComputedTokens(a.optInt(RequestAttributes.PREFILL_DONE_TOKENS))
                .setNumOutputTokens(a.optInt(RequestAttributes.DECODE_DONE_TOKENS))
                .setMaxTokens(a.optInt(RequestAttributes.DECODE_MAX_TOKENS))
                .setNumPreemptions(a.optInt("num_preemptions"))
                .setScheduleKind(a.optString(RequestAttributes.SCHEDULE_KIND))
                .setFinishReason(a.optString(RequestAttributes.FINISH_STATUS))
                .setAttributes(rest).build();
    }

    /** The fork's API-side {@code api.*} event on its {@code llm_request} span. */
    public static RequestEvent api(Span.Event e, Span span, InstanceIdentity id) {
        RequestEventKind kind = API_EVENTS.get(e.getName());
        if (kind == null) {
            throw new IllegalArgumentException("not an API event: " + e.getName());
        }
        Attributes a = Attributes.of(e.getAttributesList(), e.getName() + " event");
        String requestId = Attributes.of(span.getAttributesList(), span.getName() + " span").optString(RequestAttributes.GEN_AI_REQUEST_ID);
        if (requestId == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, e.getName() + ": no gen_ai.request.id on its " + span.getName() + " span");
        }
        Double mono = a.optDouble(RequestAttributes.EVENT_TS_MONOTONIC);
        Map<String, String> rest = new HashMap<>(a.asStrings());
        rest.remove(RequestAttributes.EVENT_TS_MONOTONIC);
        String reason = a.optString("reason");
        rest.remove("reason");
        return RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId).setKind(kind)
                .setTimeUnixNano(e.getTimeUnixNano()).setTsMonotonicNs(mono == null ? null : Math.round(mono * 1e9))
                .setFinishReason(reason).setAttributes(rest).build();
    }

    /** Keys of an llm_request span that have a field of their own; the rest go to the attributes map. */
    private static final java.util.Set<String> LLM_REQUEST_FIELDS = java.util.Set.of(RequestAttributes.GEN_AI_REQUEST_ID, RequestAttributes.GEN_AI_USAGE_PROMPT_TOKENS,
            RequestAttributes.GEN_AI_USAGE_COMPLETION_TOKENS, RequestAttributes.GEN_AI_REQUEST_MAX_TOKENS, RequestAttributes.GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN, RequestAttributes.GEN_AI_LATENCY_E2E,
            RequestAttributes.GEN_AI_LATENCY_TIME_IN_QUEUE, RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL, RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_DECODE,
            RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_INFERENCE, RequestAttributes.GEN_AI_RESPONSE_FINISH_REASONS);

    public static RequestEvent llmRequest(Span span, InstanceIdentity id) {
        Attributes a = Attributes.of(span.getAttributesList(), LLM_REQUEST + " span");
        String requestId = a.requireString(RequestAttributes.GEN_AI_REQUEST_ID);
        List<String> finish = a.optStrings(RequestAttributes.GEN_AI_RESPONSE_FINISH_REASONS);
        Map<String, String> rest = new HashMap<>(a.asStrings());
        rest.keySet().removeAll(LLM_REQUEST_FIELDS);
        RequestEvent r = RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId)
                .setKind(RequestEventKind.LLM_REQUEST).setTimeUnixNano(span.getStartTimeUnixNano())
                .setNumPromptTokens(a.optInt(RequestAttributes.GEN_AI_USAGE_PROMPT_TOKENS))
                .setCompletionTokens(a.optInt(RequestAttributes.GEN_AI_USAGE_COMPLETION_TOKENS))
                .setMaxTokens(a.optInt(RequestAttributes.GEN_AI_REQUEST_MAX_TOKENS))
                .setTtftS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN))
                .setE2eS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_E2E))
                .setQueueS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_TIME_IN_QUEUE))
                .setPrefillS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL))
                .setDecodeS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_DECODE))
                .setInferenceS(a.optDouble(RequestAttributes.GEN_AI_LATENCY_TIME_IN_MODEL_INFERENCE))
                .setFinishReason(finish == null || finish.isEmpty() ? null : String.join(",", finish))
                .setAttributes(rest).build();
        for (Double d : new Double[] {r.getTtftS(), r.getE2eS(), r.getQueueS(), r.getPrefillS(), r.getDecodeS(), r.getInferenceS()}) {
            if (d != null && (d < 0 || d.isNaN() || d > 86_400)) {
                throw new Rejection(Rejection.ABSURD_VALUE, LLM_REQUEST + " " + requestId + ": latency " + d + " s");
            }
        }
        return r;
    }

    /** All request events of a span: its journey, API and snapshot events, and itself when it is an llm_request. */
    public static List<RequestEvent> fromSpan(Span span, InstanceIdentity id, List<Rejection> rejected) {
        List<RequestEvent> out = new ArrayList<>();
        if (span.getName().equals(LLM_REQUEST)) {
            try {
                out.add(llmRequest(span, id));
            } catch (Rejection r) {
                rejected.add(r);
            }
        }
        for (Span.Event e : span.getEventsList()) {
            try {
                if (e.getName().equals(SNAPSHOT)) {
                    out.add(snapshot(e, id));
                } else if (e.getName().startsWith(JOURNEY_PREFIX)) {
                    out.add(journey(e, span, id));
                } else if (span.getName().equals(LLM_REQUEST) && API_EVENTS.containsKey(e.getName())) {
                    out.add(api(e, span, id));
                }
            } catch (Rejection r) {
                rejected.add(r);
            }
        }
        return out;
    }

    @SafeVarargs
    private static <T> T firstNonNull(T... values) {
        for (T v : values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }
}
