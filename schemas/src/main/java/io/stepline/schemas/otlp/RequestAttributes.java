package io.stepline.schemas.otlp;

/**
 * The attribute keys of request events on the wire (docs/INPUT.md, "Request events"):
 * {@code step.REQUEST_SNAPSHOT} events, journey events, and vLLM's {@code llm_request} span. One
 * spelling for the simulator that writes them and ingest that reads them; the names of the spans
 * and events themselves are in {@link StepAttributes}.
 */
public final class RequestAttributes {
    private RequestAttributes() {}

    // step.REQUEST_SNAPSHOT: a request's state at one step (with StepAttributes.STEP_ID)
    public static final String REQUEST_ID = "request.id";
    public static final String REQUEST_PHASE = "request.phase";
    public static final String REQUEST_NUM_PROMPT_TOKENS = "request.num_prompt_tokens";
    public static final String REQUEST_NUM_COMPUTED_TOKENS = "request.num_computed_tokens";
    public static final String REQUEST_NUM_OUTPUT_TOKENS = "request.num_output_tokens";
    public static final String REQUEST_NUM_PREEMPTIONS = "request.num_preemptions";
    public static final String REQUEST_SCHEDULED_TOKENS_THIS_STEP = "request.scheduled_tokens_this_step";
    public static final String KV_BLOCKS_ALLOCATED_GPU = "kv.blocks_allocated_gpu";
    public static final String KV_BLOCKS_CACHED_GPU = "kv.blocks_cached_gpu";
    public static final String REQUEST_MAX_TOKENS = "request.max_tokens";
    public static final String REQUEST_EFFECTIVE_PROMPT_LEN = "request.effective_prompt_len";

    // journey.* events
    public static final String EVENT_TYPE = "event.type";
    /** Monotonic seconds (a double); {@link #TS_MONOTONIC_NS} when given in nanoseconds. */
    public static final String TS_MONOTONIC = "ts.monotonic";
    public static final String TS_MONOTONIC_NS = "ts.monotonic_ns";
    /** The engine step the event happened at. */
    public static final String SCHEDULER_STEP = "scheduler.step";
    public static final String PREFILL_DONE_TOKENS = "prefill.done_tokens";
    public static final String PREFILL_TOTAL_TOKENS = "prefill.total_tokens";
    public static final String DECODE_DONE_TOKENS = "decode.done_tokens";
    public static final String DECODE_MAX_TOKENS = "decode.max_tokens";
    public static final String SCHEDULE_KIND = "schedule.kind";
    public static final String FINISH_STATUS = "finish.status";
    /** The request's phase at a journey event (written by the simulator; ingest keeps it among the event's other attributes). */
    public static final String JOURNEY_PHASE = "phase";
    public static final String JOURNEY_NUM_PREEMPTIONS = "num_preemptions";
    /** The fork's api.* events on its llm_request span: monotonic seconds. */
    public static final String EVENT_TS_MONOTONIC = "event.ts.monotonic";

    // vLLM's llm_request span (OpenTelemetry GenAI conventions); latencies in seconds
    public static final String GEN_AI_REQUEST_ID = "gen_ai.request.id";
    public static final String GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
    public static final String GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens";
    public static final String GEN_AI_USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens";
    public static final String GEN_AI_USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens";
    public static final String GEN_AI_LATENCY_TIME_IN_QUEUE = "gen_ai.latency.time_in_queue";
    public static final String GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN = "gen_ai.latency.time_to_first_token";
    public static final String GEN_AI_LATENCY_E2E = "gen_ai.latency.e2e";
    public static final String GEN_AI_LATENCY_TIME_IN_MODEL_PREFILL = "gen_ai.latency.time_in_model_prefill";
    public static final String GEN_AI_LATENCY_TIME_IN_MODEL_DECODE = "gen_ai.latency.time_in_model_decode";
    public static final String GEN_AI_LATENCY_TIME_IN_MODEL_INFERENCE = "gen_ai.latency.time_in_model_inference";
    public static final String GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
}
