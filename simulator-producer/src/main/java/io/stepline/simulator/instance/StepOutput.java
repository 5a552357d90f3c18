package io.stepline.simulator.instance;

import java.util.List;

import io.stepline.events.KernelBatch;
import io.stepline.events.StepLabel;

/** Everything one simulated engine step emits: spans, kernel batches, ground truth, request events. */
public record StepOutput(
        String instanceId,
        String role,
        int tp,
        long stepId,
        long startNs,
        long endNs,
        long monoStartNs,
        long scheduleEndMonoNs,
        ScheduledBatch batch,
        int kvBlocksTotal,
        int kvBlocksFree,
        double kvUsage,
        int numFinished,
        List<Phase> phases,
        List<KernelBatch> kernels,
        StepLabel label,
        List<Request> finishedRequests,
        List<RequestSnapshot> snapshots) {

    /**
     * A running request as the scheduler saw it when it built this step's batch (the §C.3
     * contract), copied then: the request object itself moves on with later steps.
     */
    public record RequestSnapshot(String requestId, boolean prefill, int promptTokens, int computedTokens, int outputTokens,
                                  int preemptions, int scheduledTokens, int blocksAllocated, int blocksCached, int maxTokens) {}

    /** A semantic phase span; rank is null for EngineCore phases. */
    public record Phase(String name, Integer rank, long startNs, long endNs) {}

    /** A request lifecycle event (journey tracing). */
    public record JourneyEvent(String type, long timeNs, long monoNs, long stepId, String phase,
                               int prefillDone, int decodeDone, int preemptions, String scheduleKind) {}
}
