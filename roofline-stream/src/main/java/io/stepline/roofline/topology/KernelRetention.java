package io.stepline.roofline.topology;

import java.time.Duration;

import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

import io.stepline.events.KernelBatch;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.Verdict;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.RetentionInput.ArrivedBatch;
import io.stepline.roofline.topology.RetentionInput.Judgement;
import io.stepline.schemas.KernelBatchCheck;
import io.stepline.schemas.Topics;
import io.stepline.schemas.EventSerdes;

/**
 * Store-on-anomaly: decides each kernel batch by its step's judgement, kept when the step is an
 * OUTLIER (or sampled as a baseline), dropped otherwise. Judgements come from {@link StepJudge}
 * (its parent); a batch that arrives before its step's judgement waits in {@link WaitingBatches}
 * until it comes or the wait expires.
 */
final class KernelRetention implements Processor<String, RetentionInput, String, byte[]> {
    private final DetectorConfig cfg;
    private final RetentionStats stats;
    private final VerdictMemory verdicts = new VerdictMemory();
    private final BaselineSampler baselines;
    private ProcessorContext<String, byte[]> ctx;
    private WaitingBatches waiting;

    KernelRetention(DetectorConfig cfg) {
        this.cfg = cfg;
        this.stats = cfg.stats();
        this.baselines = new BaselineSampler(cfg.baselineSampleRate());
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.ctx = context;
        if (waiting != null) {
            waiting.release(); // initialised again without a close: the store is counted afresh below
        }
        this.waiting = new WaitingBatches(context.getStateStore(RooflineTopology.PENDING_STORE), stats);
        waiting.restore();
        context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, now -> waiting.expire(now, cfg.pendingMaxAgeMs()));
    }

    @Override
    public void process(Record<String, RetentionInput> record) {
        if (record.value() instanceof Judgement j) {
            judged(record.key(), j, record.timestamp());
        } else if (record.value() instanceof ArrivedBatch b) {
            arrived(record, b.bytes());
        }
    }

    private void judged(String inst, Judgement j, long ts) {
        verdicts.remember(inst, j);
        for (byte[] raw : waiting.take(inst, j.stepId())) {
            decide(EventSerdes.KERNEL_BATCH.decode(raw), raw.length, j, ts);
        }
    }

    private void arrived(Record<String, RetentionInput> record, byte[] bytes) {
        KernelBatch kb;
        try {
            kb = EventSerdes.KERNEL_BATCH.decode(bytes);
        } catch (RuntimeException e) {
            DeadLetterRoute.forward(ctx, record, bytes, "UNDECODABLE_KERNEL_BATCH", e.getMessage(), Topics.KERNELS.topicName());
            return;
        }
        String problem = KernelBatchCheck.problem(kb);
        if (problem != null) {
            DeadLetterRoute.forward(ctx, record, bytes, "BAD_KERNEL_BATCH", problem, Topics.KERNELS.topicName());
            return;
        }
        stats.kernelRecords.add(kb.getKernels().size());
        Judgement j = verdicts.of(kb.getInstanceId(), kb.getStepId());
        if (j != null) {
            decide(kb, bytes.length, j, record.timestamp());
            return;
        }
        if (waiting.bytes() + bytes.length > cfg.pendingMaxBytes()) {
            stats.overflowBatches.increment();
            stats.overflowBytes.add(bytes.length);
            return;
        }
        // the punctuator's clock, which tests can drive
        waiting.park(kb.getInstanceId(), kb.getStepId(), kb.getRank(), bytes, ctx.currentSystemTimeMs());
    }

    private void decide(KernelBatch kb, int size, Judgement j, long ts) {
        boolean outlier = j.verdict() == Verdict.OUTLIER;
        boolean baseline = !outlier && j.verdict() == Verdict.NORMAL && baselines.keep(kb);
        if (!outlier && !baseline) {
            stats.droppedBatches.increment();
            stats.droppedBytes.add(size);
            return;
        }
        if (outlier) {
            stats.retainedOutlierBatches.increment();
            stats.retainedOutlierBytes.add(size);
        } else {
            stats.retainedBaselineBatches.increment();
            stats.retainedBaselineBytes.add(size);
        }
        RetainedKernelBatch r = new RetainedKernelBatch(kb, baseline, j.verdict(), Double.isNaN(j.ratio()) ? 0 : j.ratio(), (long) size);
        ctx.forward(new Record<>(kb.getInstanceId(), EventSerdes.RETAINED_KERNELS.encode(r), ts), RooflineTopology.RETAINED_SINK);
    }

    @Override
    public void close() {
        // the task leaves this thread (rebalance, migration, shutdown): its waiting batches stay in the
        // store and its changelog, and are counted again by whichever processor restores them
        if (waiting != null) {
            waiting.release();
        }
    }
}
