package io.stepline.ingest;

import static io.stepline.ingest.Otlp.d;
import static io.stepline.ingest.Otlp.i;
import static io.stepline.ingest.Otlp.s;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Payloads shaped as the producers nobody here wrote send them, from their documented code:
 * the step-tracing fork of vLLM (inference-sim/vllm: scheduler.py's {@code scheduler_steps_<seq>}
 * spans and {@code journey.*} events on {@code llm_core}, serving.py's {@code llm_request} API
 * span with {@code api.*} events) and upstream vLLM's {@code llm_request} span
 * (output_processor.py's do_tracing).
 */
final class ForkShapes {
    /** Wall clock of step 1's start. */
    static final long T0 = Otlp.T0;
    /** The engine's monotonic clock at step 1's start (an unrelated origin, as CLOCK_MONOTONIC is). */
    static final long MONO0 = 7_000_000_000_000L;
    /** schedule() time, which step.duration_us covers. */
    static final long SCHEDULE_NS = 300_000;

    private ForkShapes() {}

    /** Step {@code id}'s latency: 10 ms plus up to 6 ms, so that a latency names the step it belongs to. */
    static long latency(long id) {
        return 10_000_000L + (id % 7) * 1_000_000L;
    }

    /** Offset of step {@code id}'s start from step 1's. */
    static long offset(long id) {
        long t = 0;
        for (long k = 1; k < id; k++) {
            t += latency(k);
        }
        return t;
    }

    /**
     * The fork's resource: the Python SDK's default attributes; {@code instance} null for a vLLM
     * started without OTEL_RESOURCE_ATTRIBUTES (service.name falls back to unknown_service).
     */
    static Resource resource(String instance) {
        Resource.Builder r = Resource.newBuilder().addAttributes(s("telemetry.sdk.language", "python"))
                .addAttributes(s("telemetry.sdk.name", "opentelemetry")).addAttributes(s("telemetry.sdk.version", "1.27.0"));
        if (instance == null) {
            return r.addAttributes(s("service.name", "unknown_service")).build();
        }
        return r.addAttributes(s("service.name", "vllm")).addAttributes(s("service.instance.id", instance)).build();
    }

    /** One step.BATCH_SUMMARY event as scheduler.py's _emit_step_batch_summary writes it. */
    static Span.Event batchSummary(long id) {
        long mono = MONO0 + offset(id);
        List<KeyValue> a = new ArrayList<>();
        a.add(i("step.id", id));
        a.add(i("step.ts_start_ns", mono));
        a.add(i("step.ts_end_ns", mono + SCHEDULE_NS));
        a.add(i("step.duration_us", SCHEDULE_NS / 1000));
        a.add(i("queue.running_depth", 6));
        a.add(i("queue.waiting_depth", 2));
        a.add(i("batch.num_prefill_reqs", 1));
        a.add(i("batch.num_decode_reqs", 5));
        a.add(i("batch.scheduled_tokens", 261));
        a.add(i("batch.prefill_tokens", 256));
        a.add(i("batch.decode_tokens", 5));
        a.add(i("batch.num_finished", 0));
        a.add(i("batch.num_preempted", 0));
        a.add(d("kv.usage_gpu_ratio", 0.4));
        a.add(i("kv.blocks_total_gpu", 8191));
        a.add(i("kv.blocks_free_gpu", 4915));
        // add_event() takes the wall clock (time.time_ns()) when schedule() is done
        return Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + offset(id) + SCHEDULE_NS).addAllAttributes(a).build();
    }

    /**
     * The span {@code scheduler_steps_<seq>} the fork closes after the steps {@code [from, to]}
     * (--step-tracing-closure-interval), with an event for each traced step.
     */
    static Span rotated(int seq, long from, long to, LongPredicate traced) {
        Span.Builder b = Span.newBuilder().setTraceId(Otlp.id(16, 1000 + seq)).setSpanId(Otlp.id(8, 1000 + seq))
                .setName("scheduler_steps_" + seq).setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                .setStartTimeUnixNano(T0 + offset(from)).setEndTimeUnixNano(T0 + offset(to) + SCHEDULE_NS)
                .addAttributes(i("scheduler.span_sequence", seq)).addAttributes(i("scheduler.step_range_start", from))
                .addAttributes(i("scheduler.closure_interval", to - from + 1)).addAttributes(i("scheduler.step_range_end", to));
        for (long id = from; id <= to; id++) {
            if (traced.test(id)) {
                b.addEvents(batchSummary(id));
            }
        }
        return b.build();
    }

    /** The fork's engine-side span of one request: llm_core with its journey events (scheduler.py _emit_journey_event). */
    static Span llmCore(String requestId, long queuedStep, long scheduledStep, long firstTokenStep, long finishedStep) {
        Span.Builder b = Span.newBuilder().setTraceId(Otlp.id(16, 77)).setSpanId(Otlp.id(8, 78)).setParentSpanId(Otlp.id(8, 79))
                .setName("llm_core").setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + offset(finishedStep + 1)).addAttributes(s("gen_ai.request.id", requestId));
        b.addEvents(journey("QUEUED", queuedStep, "WAITING", 0, 0, null, null));
        b.addEvents(journey("SCHEDULED", scheduledStep, "PREFILL", 0, 0, "FIRST", null));
        b.addEvents(journey("FIRST_TOKEN", firstTokenStep, "DECODE", 256, 1, null, null));
        b.addEvents(journey("FINISHED", finishedStep, "DECODE", 256, 16, null, "stopped"));
        return b.build();
    }

    private static Span.Event journey(String type, long step, String phase, int prefillDone, int decodeDone, String scheduleKind, String finish) {
        long mono = MONO0 + offset(Math.max(1, step));
        Span.Event.Builder e = Span.Event.newBuilder().setName("journey." + type).setTimeUnixNano(T0 + offset(Math.max(1, step)))
                .addAttributes(s("event.type", type)).addAttributes(d("ts.monotonic", mono / 1e9)).addAttributes(i("ts.monotonic_ns", mono))
                .addAttributes(i("scheduler.step", step)).addAttributes(s("phase", phase))
                .addAttributes(i("prefill.done_tokens", prefillDone)).addAttributes(i("prefill.total_tokens", 256))
                .addAttributes(i("decode.done_tokens", decodeDone)).addAttributes(i("decode.max_tokens", 64)).addAttributes(i("num_preemptions", 0));
        if (scheduleKind != null) {
            e.addAttributes(s("schedule.kind", scheduleKind));
        }
        if (finish != null) {
            e.addAttributes(s("finish.status", finish));
        }
        return e.build();
    }

    /** The fork's API-side span (serving.py): llm_request with gen_ai.* attributes and api.* events. */
    static Span apiRequest(String requestId, boolean aborted) {
        Span.Builder b = Span.newBuilder().setTraceId(Otlp.id(16, 77)).setSpanId(Otlp.id(8, 79)).setName("llm_request")
                .setKind(Span.SpanKind.SPAN_KIND_SERVER).setStartTimeUnixNano(T0 - 2_000_000).setEndTimeUnixNano(T0 + 400_000_000)
                .addAttributes(s("gen_ai.request.id", requestId)).addAttributes(s("http.route", "/v1/chat/completions"))
                .addAttributes(s("gen_ai.response.model", "meta-llama/Llama-2-7b-hf")).addAttributes(i("gen_ai.usage.prompt_tokens", 256))
                .addAttributes(d("gen_ai.request.temperature", 0.7)).addAttributes(i("gen_ai.request.max_tokens", 64))
                .addAttributes(i("gen_ai.usage.completion_tokens", 16));
        b.addEvents(api("api.ARRIVED", T0 - 2_000_000, 100.0));
        b.addEvents(api("api.HANDOFF_TO_CORE", T0 - 1_000_000, 100.001));
        if (aborted) {
            b.addEvents(api("api.ABORTED", T0 + 400_000_000, 100.402).toBuilder().addAttributes(s("reason", "client_disconnect"))
                    .addAttributes(s("error", "the client closed the stream")).build());
        } else {
            b.addEvents(api("api.DEPARTED", T0 + 400_000_000, 100.402));
        }
        return b.build();
    }

    private static Span.Event api(String name, long wall, double monoS) {
        return Span.Event.newBuilder().setName(name).setTimeUnixNano(wall).addAttributes(d("event.ts.monotonic", monoS)).build();
    }

    /** Upstream vLLM's llm_request span (output_processor.py do_tracing): latencies in seconds, finish reasons as a JSON list. */
    static Span upstreamLlmRequest(String requestId) {
        return Span.newBuilder().setTraceId(Otlp.id(16, 91)).setSpanId(Otlp.id(8, 92)).setName("llm_request").setKind(Span.SpanKind.SPAN_KIND_SERVER)
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1_250_000_000L)
                .addAttributes(d("gen_ai.latency.time_to_first_token", 0.125)).addAttributes(d("gen_ai.latency.e2e", 1.25))
                .addAttributes(d("gen_ai.latency.time_in_queue", 0.02)).addAttributes(i("gen_ai.usage.prompt_tokens", 512))
                .addAttributes(i("gen_ai.usage.completion_tokens", 100)).addAttributes(d("gen_ai.latency.time_in_model_prefill", 0.1))
                .addAttributes(d("gen_ai.latency.time_in_model_decode", 1.1)).addAttributes(d("gen_ai.latency.time_in_model_inference", 1.2))
                .addAttributes(s("gen_ai.request.id", requestId)).addAttributes(s("gen_ai.response.finish_reasons", "[\"length\"]"))
                .addAttributes(d("gen_ai.request.top_p", 0.9)).addAttributes(i("gen_ai.request.max_tokens", 100)).build();
    }
}
