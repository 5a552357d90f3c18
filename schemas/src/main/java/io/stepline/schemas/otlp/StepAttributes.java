package io.stepline.schemas.otlp;

import java.util.List;
import java.util.Set;

/**
 * The names of Stepline's step contract on the wire (docs/INPUT.md, "Instance identity", "Step
 * keys", forms A and B): resource attributes, span and event names, and the batch-summary keys.
 * One spelling for the simulator that writes them and ingest that reads them.
 */
public final class StepAttributes {
    private StepAttributes() {}

    // resource attributes: who the instance is (docs/INPUT.md, "Instance identity")
    public static final String SERVICE_INSTANCE_ID = "service.instance.id";
    public static final String HOST_NAME = "host.name";
    public static final String PROCESS_PID = "process.pid";
    public static final String SERVICE_NAME = "service.name";
    /** prefill | decode | mixed. */
    public static final String VLLM_INSTANCE_ROLE = "vllm.instance.role";
    public static final String VLLM_PARALLEL_TP_SIZE = "vllm.parallel.tp_size";

    // instrumentation scopes
    /** The step-tracing fork's scope of form B events. */
    public static final String STEP_SCOPE = "vllm.scheduler.step";
    /** vLLM's scope of request spans. */
    public static final String REQUEST_SCOPE = "vllm.llm_engine";

    // spans and events
    /** Form A: one span per engine step. */
    public static final String STEP_SPAN = "EngineCore::Step";
    public static final String SCHEDULE_PHASE = "EngineCore::Schedule";
    public static final String EXECUTE_PHASE = "EngineCore::Execute";
    public static final String OUTPUT_PHASE = "EngineCore::Output";
    public static final String PREPROCESS_PHASE = "ModelRunner::Preprocess";
    public static final String FORWARD_PHASE = "ModelRunner::Forward";
    public static final String SAMPLE_PHASE = "ModelRunner::Sample";
    public static final String POSTPROCESS_PHASE = "ModelRunner::Postprocess";
    /** Engine-side phases, children of the step span. */
    public static final Set<String> ENGINE_PHASES = Set.of(SCHEDULE_PHASE, EXECUTE_PHASE, OUTPUT_PHASE);
    /** Per worker rank phases (with {@link #WORKER_RANK}), children of the step span. */
    public static final Set<String> RANK_PHASES = Set.of(PREPROCESS_PHASE, FORWARD_PHASE, SAMPLE_PHASE, POSTPROCESS_PHASE);
    /** The rank of a ModelRunner phase span. */
    public static final String WORKER_RANK = "worker.rank";
    /** The long-lived span of form B events (the fork rotates it as {@code scheduler_steps_<seq>}). */
    public static final String SCHEDULER_STEPS_SPAN = "scheduler_steps";
    /** Form B: one step's batch summary, an event on any span. */
    public static final String BATCH_SUMMARY = "step.BATCH_SUMMARY";
    /** Per-request state at a step, an event on the step's span. */
    public static final String REQUEST_SNAPSHOT = "step.REQUEST_SNAPSHOT";
    /** vLLM's per-request span with {@code gen_ai.*} attributes. */
    public static final String LLM_REQUEST_SPAN = "llm_request";
    /** Prefix of request journey events ({@code journey.QUEUED}, ...). */
    public static final String JOURNEY_PREFIX = "journey.";

    // batch-summary keys (docs/INPUT.md, "Step keys"): required are STEP_ID and the four batch counts
    public static final String STEP_ID = "step.id";
    /** Monotonic ns bounding {@code schedule()} only (form B). */
    public static final String STEP_TS_START_NS = "step.ts_start_ns";
    public static final String STEP_TS_END_NS = "step.ts_end_ns";
    public static final String STEP_DURATION_US = "step.duration_us";
    public static final String QUEUE_RUNNING_DEPTH = "queue.running_depth";
    public static final String QUEUE_WAITING_DEPTH = "queue.waiting_depth";
    public static final String BATCH_NUM_PREFILL_REQS = "batch.num_prefill_reqs";
    public static final String BATCH_NUM_DECODE_REQS = "batch.num_decode_reqs";
    public static final String BATCH_SCHEDULED_TOKENS = "batch.scheduled_tokens";
    public static final String BATCH_PREFILL_TOKENS = "batch.prefill_tokens";
    public static final String BATCH_DECODE_TOKENS = "batch.decode_tokens";
    public static final String BATCH_NUM_FINISHED = "batch.num_finished";
    public static final String BATCH_NUM_PREEMPTED = "batch.num_preempted";
    public static final String KV_USAGE_GPU_RATIO = "kv.usage_gpu_ratio";
    public static final String KV_BLOCKS_TOTAL_GPU = "kv.blocks_total_gpu";
    public static final String KV_BLOCKS_FREE_GPU = "kv.blocks_free_gpu";
    public static final String KV_BLOCKS_CPU_OFFLOAD = "kv.blocks_cpu_offload";
    public static final String KV_BLOCKS_DISK_OFFLOAD = "kv.blocks_disk_offload";
    public static final String BATCH_DECODE_CONTEXT_TOKENS = "batch.decode_context_tokens";
    /** An explicit step latency, which then overrides the span bounds or the interval to the next step. */
    public static final String STEP_LATENCY_NS = "step.latency_ns";
    public static final String STEP_LATENCY_US = "step.latency_us";

    /** Every batch-summary key, in the order of docs/INPUT.md and the simulator's spans (the order ingest's reader tries first). */
    public static final List<String> BATCH_SUMMARY_KEYS = List.of(STEP_ID, STEP_TS_START_NS, STEP_TS_END_NS, STEP_DURATION_US,
            QUEUE_RUNNING_DEPTH, QUEUE_WAITING_DEPTH, BATCH_NUM_PREFILL_REQS, BATCH_NUM_DECODE_REQS, BATCH_SCHEDULED_TOKENS,
            BATCH_PREFILL_TOKENS, BATCH_DECODE_TOKENS, BATCH_NUM_FINISHED, BATCH_NUM_PREEMPTED, KV_USAGE_GPU_RATIO,
            KV_BLOCKS_TOTAL_GPU, KV_BLOCKS_FREE_GPU, KV_BLOCKS_CPU_OFFLOAD, KV_BLOCKS_DISK_OFFLOAD, BATCH_DECODE_CONTEXT_TOKENS,
            STEP_LATENCY_NS, STEP_LATENCY_US);
}
