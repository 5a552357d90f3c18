package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.opentelemetry.proto.trace.v1.Span;

import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.ingest.validation.Rejection;

/**
 * Request-level events: vLLM journey events ({@code journey.QUEUED} ... {@code journey.FINISHED}
 * span events with {@code ts.monotonic_ns}, progress counters and {@code scheduler.step}),
 * {@code step.REQUEST_SNAPSHOT} events (seeds/000 §C.3), and upstream {@code llm_request} spans
 * with {@code gen_ai.*} attributes.
 */
public final class RequestMapper {
    public static final String SNAPSHOT = "step.REQUEST_SNAPSHOT";
    public static final String LLM_REQUEST = "llm_request";
    public static final String JOURNEY_PREFIX = "journey.";

    private RequestMapper() {}

    public static boolean isRequestEvent(String eventName) {
        return eventName.equals(SNAPSHOT) || eventName.startsWith(JOURNEY_PREFIX);
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
        return RequestEvent.newBuilder().setInstanceId(id.instanceId()).setRequestId(requestId).setKind(kind)
                .setTimeUnixNano(e.getTimeUnixNano()).setTsMonotonicNs(mono).setStepId(a.optLong("scheduler.step"))
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

    public static RequestEvent llmRequest(Span span, InstanceIdentity id) {
        Attributes a = Attributes.of(span.getAttributesList(), LLM_REQUEST + " span");
        String requestId = a.requireString("gen_ai.request.id");
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
                .setAttributes(Map.of()).build();
        for (Double d : new Double[] {r.getTtftS(), r.getE2eS(), r.getQueueS(), r.getPrefillS(), r.getDecodeS()}) {
            if (d != null && (d < 0 || d.isNaN() || d > 86_400)) {
                throw new Rejection(Rejection.ABSURD_VALUE, LLM_REQUEST + " " + requestId + ": latency " + d + " s");
            }
        }
        return r;
    }

    /** All request events of a span: its journey and snapshot events, and itself when it is an llm_request. */
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
