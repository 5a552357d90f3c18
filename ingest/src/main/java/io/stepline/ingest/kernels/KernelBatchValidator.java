package io.stepline.ingest.kernels;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;
import io.stepline.ingest.validation.Rejection;

/** Checks a kernel batch before it enters the pipeline: ids sane, every record well-formed. */
public final class KernelBatchValidator {
    /** StriaTrace sees ~1,600 kernels per rank per step; ten times that is a broken producer. */
    public static final int MAX_KERNELS_PER_BATCH = 20_000;
    static final long MAX_KERNEL_NS = 600_000_000_000L;

    private KernelBatchValidator() {}

    public static KernelBatch validate(KernelBatch b) {
        if (b.getInstanceId() == null || b.getInstanceId().isBlank()) {
            throw new Rejection(Rejection.BAD_KERNEL_BATCH, "kernel batch without instance_id");
        }
        String w = "kernel batch " + b.getInstanceId() + "/rank " + b.getRank() + "/step " + b.getStepId();
        if (b.getRank() < 0 || b.getRank() > 4096) {
            throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": rank out of range");
        }
        if (b.getStepId() < 0) {
            throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": negative step id");
        }
        if (b.getKernels().size() > MAX_KERNELS_PER_BATCH) {
            throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": " + b.getKernels().size() + " records (max " + MAX_KERNELS_PER_BATCH + ")");
        }
        for (int i = 0; i < b.getKernels().size(); i++) {
            KernelRecord k = b.getKernels().get(i);
            if (k.getName() == null || k.getName().isBlank()) {
                throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": record " + i + " has no name");
            }
            if (k.getEndNs() < k.getStartNs()) {
                throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": record " + i + " (" + k.getName() + ") ends before it starts");
            }
            if (k.getEndNs() - k.getStartNs() > MAX_KERNEL_NS) {
                throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": record " + i + " lasts more than 10 minutes");
            }
            if (k.getBytes() != null && k.getBytes() < 0) {
                throw new Rejection(Rejection.BAD_KERNEL_BATCH, w + ": record " + i + " has negative bytes");
            }
        }
        return b;
    }
}
