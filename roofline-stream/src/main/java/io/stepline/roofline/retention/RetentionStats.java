package io.stepline.roofline.retention;

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
    /** Refused because the pending store was full. */
    public final LongAdder overflowBatches = new LongAdder();
    public final LongAdder overflowBytes = new LongAdder();
    public final LongAdder kernelRecords = new LongAdder();
    /** Steps that arrived with no latency (LatencySource NONE or SCHEDULE_ONLY): published, never judged. */
    public final LongAdder stepsWithoutLatency = new LongAdder();
    /** Batches (and bytes) waiting for their step's verdict right now. */
    public final LongAdder waitingBatches = new LongAdder();
    public final LongAdder waitingBytes = new LongAdder();

    public long totalBytes() {
        return retainedOutlierBytes.sum() + retainedBaselineBytes.sum() + droppedBytes.sum() + expiredBytes.sum() + overflowBytes.sum();
    }

    /** Kernel batches whose fate is settled: retained, dropped, expired or refused for lack of room. */
    public long decidedBatches() {
        return retainedOutlierBatches.sum() + retainedBaselineBatches.sum() + droppedBatches.sum() + expiredBatches.sum() + overflowBatches.sum();
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
                "retained %d outlier + %d baseline batches (%d bytes), dropped %d (%d bytes), expired %d, overflow %d, waiting %d; ratio %.4f",
                retainedOutlierBatches.sum(), retainedBaselineBatches.sum(), retainedBytes(), droppedBatches.sum(), droppedBytes.sum(),
                expiredBatches.sum(), overflowBatches.sum(), waitingBatches.sum(), retentionRatio());
    }
}
