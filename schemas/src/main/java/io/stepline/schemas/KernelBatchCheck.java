package io.stepline.schemas;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;

/**
 * What makes a kernel batch unusable: ids out of range, a record without a name, ending before it
 * starts, absurdly long, or with negative bytes. Checked where batches enter (file ingest) and where
 * the detector reads them from {@code stepline.kernels}, whoever produced them.
 */
public final class KernelBatchCheck {
    /** StriaTrace sees ~1,600 kernels per rank per step; ten times that is a broken producer. */
    public static final int MAX_KERNELS_PER_BATCH = 20_000;
    /** No kernel runs for ten minutes. */
    public static final long MAX_KERNEL_NS = 600_000_000_000L;

    private KernelBatchCheck() {}

    /** Why the batch is unusable, or null when it is fine. */
    public static String problem(KernelBatch b) {
        if (b.getInstanceId() == null || b.getInstanceId().isBlank()) {
            return "kernel batch without instance_id";
        }
        String w = "kernel batch " + b.getInstanceId() + "/rank " + b.getRank() + "/step " + b.getStepId();
        if (b.getRank() < 0 || b.getRank() > 4096) {
            return w + ": rank out of range";
        }
        if (b.getStepId() < 0) {
            return w + ": negative step id";
        }
        if (b.getKernels().size() > MAX_KERNELS_PER_BATCH) {
            return w + ": " + b.getKernels().size() + " records (max " + MAX_KERNELS_PER_BATCH + ")";
        }
        for (int i = 0; i < b.getKernels().size(); i++) {
            KernelRecord k = b.getKernels().get(i);
            if (k.getName() == null || k.getName().isBlank()) {
                return w + ": record " + i + " has no name";
            }
            if (k.getEndNs() < k.getStartNs()) {
                return w + ": record " + i + " (" + k.getName() + ") ends before it starts";
            }
            if (k.getEndNs() - k.getStartNs() > MAX_KERNEL_NS) {
                return w + ": record " + i + " lasts more than 10 minutes";
            }
            if (k.getBytes() != null && k.getBytes() < 0) {
                return w + ": record " + i + " has negative bytes";
            }
        }
        return null;
    }
}
