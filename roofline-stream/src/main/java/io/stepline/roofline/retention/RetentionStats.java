package io.stepline.roofline.retention;

import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/** What store-on-anomaly retention kept and dropped, in batches and bytes. Thread-safe. */
public final class RetentionStats {
    public final LongAdder retainedOutlierBatches = new LongAdder();
    public final LongAdder retainedOutlierBytes = new LongAdder();
    public final LongAdder retainedBaselineBatches = new LongAdder();
    public final LongAdder retainedBaselineBytes = new LongAdder();
    public final LongAdder droppedBatches = new LongAdder();
    public final LongAdder droppedBytes = new LongAdder();
    /** Waited longer than the pending limit for a verdict that never came. */
    public final LongAdder expiredBatches = new LongAdder();
    public final LongAdder expiredBytes = new LongAdder();
    /**
     * Came the kernel lateness or more behind their instance's steps ({@link io.stepline.schemas.KernelLateness}):
     * dropped, whatever their step's verdict, so that what is retained of a step is settled by then.
     */
    public final LongAdder lateBatches = new LongAdder();
    public final LongAdder lateBytes = new LongAdder();
    /**
     * The most steps a kernel batch came behind the highest step of its instance seen, of the batches that
     * came after their step: how much lateness the input needs (it is what a batch over the lateness counts as late by).
     */
    public final LongAccumulator mostStepsBehind = new LongAccumulator(Math::max, 0);
    /** Refused because the pending store was full. */
    public final LongAdder overflowBatches = new LongAdder();
    public final LongAdder overflowBytes = new LongAdder();
    public final LongAdder kernelRecords = new LongAdder();
    /** Steps that arrived with no latency (LatencySource NONE or SCHEDULE_ONLY): published, never judged. */
    public final LongAdder stepsWithoutLatency = new LongAdder();
    /** Step records that came twice (same instance, step id and start): judged once (StepJudge, RepeatedSteps). */
    public final LongAdder repeatedSteps = new LongAdder();
    /** Shifts standing when a replay's input ended, reported then (StepJudge, LatencyDetector.standingAtEnd). */
    public final LongAdder standingAtInputEnd = new LongAdder();
    /** Batches (and bytes) waiting for their step's verdict right now. */
    public final LongAdder waitingBatches = new LongAdder();
    public final LongAdder waitingBytes = new LongAdder();

    public long totalBytes() {
        return retainedOutlierBytes.sum() + retainedBaselineBytes.sum() + droppedBytes.sum() + expiredBytes.sum() + overflowBytes.sum()
                + lateBytes.sum();
    }

    /** Kernel batches whose fate is settled: retained, dropped, expired, too late or refused for lack of room. */
    public long decidedBatches() {
        return retainedOutlierBatches.sum() + retainedBaselineBatches.sum() + droppedBatches.sum() + expiredBatches.sum() + overflowBatches.sum()
                + lateBatches.sum();
    }

    public long retainedBytes() {
        return retainedOutlierBytes.sum() + retainedBaselineBytes.sum();
    }

    /** Retained bytes / all kernel bytes seen (StriaTrace: ~1.6%). */
    public double retentionRatio() {
        long total = totalBytes();
        return total == 0 ? Double.NaN : (double) retainedBytes() / total;
    }

    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT,
                "retained %d outlier + %d baseline batches (%d bytes), dropped %d (%d bytes), late %d (up to %d steps behind), expired %d,"
                        + " overflow %d, waiting %d; ratio %.4f%s%s",
                retainedOutlierBatches.sum(), retainedBaselineBatches.sum(), retainedBytes(), droppedBatches.sum(), droppedBytes.sum(),
                lateBatches.sum(), mostStepsBehind.get(), expiredBatches.sum(), overflowBatches.sum(), waitingBatches.sum(), retentionRatio(),
                repeatedSteps.sum() == 0 ? "" : String.format(java.util.Locale.ROOT, "; %d step records came twice, judged once", repeatedSteps.sum()),
                standingAtInputEnd.sum() == 0 ? "" : String.format(java.util.Locale.ROOT, "; %d shift(s) standing at the input's end reported",
                        standingAtInputEnd.sum()));
    }
}
