package io.stepline.ingest.logs;

import java.util.ArrayList;
import java.util.List;

import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.validation.Rejection;

/**
 * An iteration line as a {@link StepRecord}: step id = iteration index, prefill = context
 * requests and tokens, decode = generation requests and tokens, scheduled tokens = their sum,
 * latency = the elapsed time ({@link LatencySource#ITERATION_LOG}). The line says nothing of the
 * queues, finished or preempted requests and (except the frontend form's usage) the KV cache:
 * those are null, with their reasons in {@code degraded}. A padding iteration, and under async
 * scheduling an iteration whose time is only the residual wait for a batch already done, have no
 * latency ({@link LatencySource#NONE}, never judged). Other iterations under async scheduling keep
 * their printed time, the wait for their batch: a lower bound of the batch's device time, so a step
 * that is slow by it was slow (degraded {@code ASYNC_SCHEDULING} says so).
 */
public final class IterationStepMapper {
    private IterationStepMapper() {}

    /**
     * @param startUnixNanos the line's wall-clock second ({@link LogClock})
     * @param async          the engine runs with async scheduling: the printed time is the wait for the batch
     * @param residual       the printed time is far too short to hold a forward pass: a residual wait, no latency
     * @param tp             tensor-parallel degree from the log's start-up lines, or null
     */
    public static StepRecord step(IterationLine line, String instanceId, long startUnixNanos, boolean async, boolean residual, Integer tp) {
        String where = "vLLM iteration line of " + instanceId;
        List<String> degraded = new ArrayList<>(4);
        degraded.add(StepMapper.MISSING_QUEUE);
        degraded.add(StepMapper.MISSING_FINISHED_PREEMPTED);
        Long free = line.kvBlocksTotal() == null ? null : line.kvBlocksTotal() - line.kvBlocksUsed();
        if (line.kvUsage() == null || line.kvBlocksTotal() == null) {
            degraded.add(StepMapper.MISSING_KV);
        }
        StepRecord.Builder b = StepRecord.newBuilder()
                .setInstanceId(instanceId).setRole(InstanceRole.UNKNOWN)
                .setStepId(line.index())
                .setNumPrefillReqs(line.contextRequests()).setPrefillTokens(line.contextTokens())
                .setNumDecodeReqs(line.generationRequests()).setDecodeTokens(line.generationTokens())
                .setScheduledTokens(line.scheduledTokens())
                .setKvUsageGpuRatio(line.kvUsage()).setKvBlocksTotalGpu(line.kvBlocksTotal()).setKvBlocksFreeGpu(free)
                .setTpSize(tp)
                .setStartUnixNano(startUnixNanos);
        if (line.dummy()) {
            // padding keeps the ranks' collectives in step: its time is the wait for the other ranks, not this rank's work
            degraded.add(StepMapper.DP_PADDING);
            b.setLatencyNs(0).setLatencySource(LatencySource.NONE).setEndUnixNano(startUnixNanos);
        } else if (async && residual) {
            degraded.add(StepMapper.ASYNC_SCHEDULING);
            b.setLatencyNs(0).setLatencySource(LatencySource.NONE).setEndUnixNano(startUnixNanos);
        } else {
            if (async) {
                degraded.add(StepMapper.ASYNC_SCHEDULING);
            }
            long ns = Math.round(line.elapsedMs() * 1_000_000.0);
            if (ns > StepMapper.MAX_STEP_NS) {
                throw new Rejection(Rejection.ABSURD_VALUE, where + " (iteration " + line.index() + "): elapsed time " + line.elapsedMs() + " ms");
            }
            b.setLatencyNs(ns).setLatencySource(LatencySource.ITERATION_LOG).setEndUnixNano(startUnixNanos + ns);
        }
        b.setDegraded(degraded);
        StepMapper.checkInvariants(b, where);
        return b.build();
    }
}
