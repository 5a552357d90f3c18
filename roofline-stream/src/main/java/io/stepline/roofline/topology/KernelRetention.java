package io.stepline.roofline.topology;

import java.time.Duration;

import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

import io.stepline.events.KernelBatch;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.Verdict;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.JudgedSteps.Kept;
import io.stepline.roofline.topology.RetentionInput.ArrivedBatch;
import io.stepline.roofline.topology.RetentionInput.Judgement;
import io.stepline.roofline.topology.RetentionInput.Unjudged;
import io.stepline.schemas.KernelBatchCheck;
import io.stepline.schemas.Topics;
import io.stepline.schemas.EventSerdes;

/**
 * Store-on-anomaly: a kernel batch is retained when its step is an OUTLIER or a NORMAL step sampled as
 * a baseline ({@link BaselineSampler}), decided when the step is judged, and dropped otherwise. Judgements
 * come from {@link StepJudge} (its parent). A batch that arrives before its step's judgement waits in
 * {@link WaitingBatches}; one that arrives after it is decided by what {@link JudgedSteps} kept of the
 * step, unless it comes the kernel lateness or more behind its instance's steps: then it is dropped as
 * late, and so is a batch still waiting when the steps pass its own by the lateness. What is retained of a
 * step therefore depends on the two topics' contents, not on the order they are read in, and is written
 * by the time the step the lateness after it is judged, which is what the report stage waits for.
 */
final class KernelRetention implements Processor<String, RetentionInput, String, byte[]> {
    private final DetectorConfig cfg;
    private final RetentionStats stats;
    private ProcessorContext<String, byte[]> ctx;
    private WaitingBatches waiting;
    private JudgedSteps judged;
    private BaselineSampler baselines;

    KernelRetention(DetectorConfig cfg) {
        this.cfg = cfg;
        this.stats = cfg.stats();
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.ctx = context;
        if (waiting != null) {
            waiting.release(); // initialised again without a close: the store is counted afresh below
        }
        KeyValueStore<String, byte[]> store = context.getStateStore(RooflineTopology.PENDING_STORE);
        this.waiting = new WaitingBatches(store, stats);
        this.judged = new JudgedSteps(store, cfg.kernelLatenessSteps());
        this.baselines = new BaselineSampler(cfg.baselineSampleRate(), store);
        waiting.restore();
        context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, now -> waiting.expire(now, cfg.pendingMaxAgeMs()));
    }

    @Override
    public void process(Record<String, RetentionInput> record) {
        if (record.value() instanceof Judgement j) {
            judged(record.key(), j, record.timestamp());
        } else if (record.value() instanceof Unjudged u) {
            seen(record.key(), u.stepId(), null, record.timestamp());
        } else if (record.value() instanceof ArrivedBatch b) {
            arrived(record, b.bytes());
        }
    }

    private void judged(String inst, Judgement j, long ts) {
        Kept kept = null;
        if (j.verdict() == Verdict.OUTLIER) {
            kept = new Kept(Verdict.OUTLIER, j.ratio());
        } else if (j.verdict() == Verdict.NORMAL && baselines.keep(inst, j.stepId(), j.startUnixNano())) {
            kept = new Kept(Verdict.NORMAL, j.ratio());
        }
        seen(inst, j.stepId(), kept, ts);
    }

    /** A step of {@code inst} was seen ({@code kept}: retain its batches; null: drop them): decides what waited for it and for the steps the lateness has passed. */
    private void seen(String inst, long stepId, Kept kept, long ts) {
        judged.see(inst, stepId, kept);
        for (byte[] raw : waiting.take(inst, stepId)) {
            decide(EventSerdes.KERNEL_BATCH.decode(raw), raw.length, kept, ts);
        }
        // batches still waiting for a step the lateness has passed: their step came out of order, before a restart, or never
        for (WaitingBatches.Taken t : waiting.takeThrough(inst, judged.lateThrough(inst))) {
            decide(EventSerdes.KERNEL_BATCH.decode(t.batch()), t.batch().length, judged.kept(inst, t.stepId()), ts);
        }
        judged.forgetLate(inst);
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
        String inst = kb.getInstanceId();
        switch (judged.fate(inst, kb.getStepId())) {
            case KEPT, DROPPED -> {
                stats.mostStepsBehind.accumulate(judged.stepsBehind(inst, kb.getStepId()));
                decide(kb, bytes.length, judged.kept(inst, kb.getStepId()), record.timestamp());
            }
            case LATE -> {
                stats.mostStepsBehind.accumulate(judged.stepsBehind(inst, kb.getStepId()));
                stats.lateBatches.increment();
                stats.lateBytes.add(bytes.length);
            }
            case UNKNOWN -> {
                if (waiting.bytes() + bytes.length > cfg.pendingMaxBytes()) {
                    stats.overflowBatches.increment();
                    stats.overflowBytes.add(bytes.length);
                    return;
                }
                // the punctuator's clock, which tests can drive
                waiting.park(inst, kb.getStepId(), kb.getRank(), bytes, ctx.currentSystemTimeMs());
            }
        }
    }

    /** Retains the batch if its step was kept ({@code kept} non-null), else drops it. */
    private void decide(KernelBatch kb, int size, Kept kept, long ts) {
        if (kept == null) {
            stats.droppedBatches.increment();
            stats.droppedBytes.add(size);
            return;
        }
        if (kept.baseline()) {
            stats.retainedBaselineBatches.increment();
            stats.retainedBaselineBytes.add(size);
        } else {
            stats.retainedOutlierBatches.increment();
            stats.retainedOutlierBytes.add(size);
        }
        RetainedKernelBatch r = new RetainedKernelBatch(kb, kept.baseline(), kept.verdict(), Double.isNaN(kept.ratio()) ? 0 : kept.ratio(), (long) size);
        ctx.forward(new Record<>(kb.getInstanceId(), EventSerdes.RETAINED_KERNELS.encode(r), ts), RooflineTopology.RETAINED_SINK);
    }

    @Override
    public void close() {
        // the task leaves this thread (rebalance, migration, shutdown): its waiting batches and kept steps stay in the
        // store and its changelog, and are counted again by whichever processor restores them
        if (waiting != null) {
            waiting.release();
        }
    }
}
