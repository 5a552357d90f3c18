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
 * <li>{@code step.REQUEST_SNAPSHOT} events (seeds/000 §C.3);</li>
 * <li>upstream vLLM's {@code llm_request} span: {@code gen_ai.request.id}, {@code gen_ai.usage.*},
 * {@code gen_ai.latency.time_to_first_token|e2e|time_in_queue|time_in_model_prefill|time_in_model_decode|time_in_model_inference}
 * (seconds) and {@code gen_ai.response.finish_reasons} (a JSON list in a string).</li>
 * </ul>
 */
public final class RequestMapper {
    public static final String SNAPSHOT = "step.REQUEST_SNAPSHOT";
    public static final String LLM_REQUEST = "llm_request";
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
        String phase = a.requireString("request.phase");
        if (!phase.equals("PREFILL") && !phase.equals("DECODE")) {
            throw new Rejection(Rejection.INVARIANT_VIOLATED, SNAPSHOT + ": request.phase must be PREFILL or DECODE, got '" + phase + "'");
        }
        RequestEvent r = RequestEvent.newBuilder().setInstanceId(id.instanceId()).setKind(RequestEventKind.SNAPSHOT)
                .setRequestId(a.requireString("request.id")).setTimeUnixNano(e.getTimeUnixNano())
                .setStepId(a.requireLong("step.id")).setPhase(phase)
                .setNumPromptTokens(a.requireInt("request.num_prompt_tokens"))
                .setNumComputedTokens(a.requireInt("request.num_computed_tokens"))
                .setNumOutputTokens(a.requireInt("request.num_output_tokens"))
                .setNumPreemptions(a.requireInt("request.num_preemptions"))
                .setScheduledTokensThisStep(a.requireInt("request.scheduled_tokens_this_step"))
                .setKvBlocksAllocatedGpu(a.requireInt("kv.blocks_allocated_gpu"))
                .setKvBlocksCachedGpu(a.requireInt("kv.blocks_cached_gpu"))
                .setKvBlocksCpuOffload(a.optInt("kv.blocks_cpu_offload"))
                .setKvBlocksDiskOffload(a.optInt("kv.blocks_disk_offload"))
                .setMaxTokens(a.optInt("request.max_tokens"))
                .setEffectivePromptLen(a.optInt("request.effective_prompt_len"))
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
        String requestId = firstNonNull(a.optString("request.id"), spanAttrs.optString("gen_ai.request.id"), spanAttrs.optString("request.id"));
        if (requestId == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, e.getName() + ": no request id on the event or its span");
        }
        Long mono = a.optLong("ts.monotonic_ns");
        if (mono == null && a.has("ts.monotonic")) {
            mono = Math.round(a.requireDouble("ts.monotonic") * 1e9);
        }
        Map<String, String> rest = a.asStrings();
        Long step = a.optLong("scheduler.step");
        return RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId).setKind(kind)
                .setTimeUnixNano(e.getTimeUnixNano()).setTsMonotonicNs(mono)
                .setStepId(step == null || step <= 0 ? null : step) // the fork's counter starts at 1: 0 means before any step
                .setPhase(a.optString("phase"))
                .setNumPromptTokens(a.optInt("prefill.total_tokens"))
                .setNumComputedTokens(a.optInt("prefill.done_tokens"))
                .setNumOutputTokens(a.optInt("decode.done_tokens"))
                .setMaxTokens(a.optInt("decode.max_tokens"))
                .setNumPreemptions(a.optInt("num_preemptions"))
                .setScheduleKind(a.optString("schedule.kind"))
                .setFinishReason(a.optString("finish.status"))
                .setAttributes(rest).build();
    }

    /** The fork's API-side {@code api.*} event on its {@code llm_request} span. */
    public static RequestEvent api(Span.Event e, Span span, InstanceIdentity id) {
        RequestEventKind kind = API_EVENTS.get(e.getName());
        if (kind == null) {
            throw new IllegalArgumentException("not an API event: " + e.getName());
        }
        Attributes a = Attributes.of(e.getAttributesList(), e.getName() + " event");
        String requestId = Attributes.of(span.getAttributesList(), span.getName() + " span").optString("gen_ai.request.id");
        if (requestId == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, e.getName() + ": no gen_ai.request.id on its " + span.getName() + " span");
        }
        Double mono = a.optDouble("event.ts.monotonic");
        Map<String, String> rest = new HashMap<>(a.asStrings());
        rest.remove("event.ts.monotonic");
        String reason = a.optString("reason");
        rest.remove("reason");
        return RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId).setKind(kind)
                .setTimeUnixNano(e.getTimeUnixNano()).setTsMonotonicNs(mono == null ? null : Math.round(mono * 1e9))
                .setFinishReason(reason).setAttributes(rest).build();
    }

    /** Keys of an llm_request span that have a field of their own; the rest go to the attributes map. */
    private static final java.util.Set<String> LLM_REQUEST_FIELDS = java.util.Set.of("gen_ai.request.id", "gen_ai.usage.prompt_tokens",
            "gen_ai.usage.completion_tokens", "gen_ai.request.max_tokens", "gen_ai.latency.time_to_first_token", "gen_ai.latency.e2e",
            "gen_ai.latency.time_in_queue", "gen_ai.latency.time_in_model_prefill", "gen_ai.latency.time_in_model_decode",
            "gen_ai.latency.time_in_model_inference", "gen_ai.response.finish_reasons");

    public static RequestEvent llmRequest(Span span, InstanceIdentity id) {
        Attributes a = Attributes.of(span.getAttributesList(), LLM_REQUEST + " span");
        String requestId = a.requireString("gen_ai.request.id");
        List<String> finish = a.optStrings("gen_ai.response.finish_reasons");
        Map<String, String> rest = new HashMap<>(a.asStrings());
        rest.keySet().removeAll(LLM_REQUEST_FIELDS);
        RequestEvent r = RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId)
                .setKind(RequestEventKind.LLM_REQUEST).setTimeUnixNano(span.getStartTimeUnixNano())
                .setNumPromptTokens(a.optInt("gen_ai.usage.prompt_tokens"))
                .setCompletionTokens(a.optInt("gen_ai.usage.completion_tokens"))
                .setMaxTokens(a.optInt("gen_ai.request.max_tokens"))
                .setTtftS(a.optDouble("gen_ai.latency.time_to_first_token"))
                .setE2eS(a.optDouble("gen_ai.latency.e2e"))
                .setQueueS(a.optDouble("gen_ai.latency.time_in_queue"))
                .setPrefillS(a.optDouble("gen_ai.latency.time_in_model_prefill"))
                .setDecodeS(a.optDouble("gen_ai.latency.time_in_model_decode"))
                .setInferenceS(a.optDouble("gen_ai.latency.time_in_model_inference"))
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
