package io.stepline.ingest.kernels;

import io.stepline.events.KernelBatch;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.KernelBatchCheck;

/** Checks a kernel batch before it enters the pipeline ({@link KernelBatchCheck}), as a {@link Rejection}. */
public final class KernelBatchValidator {
    private KernelBatchValidator() {}

    public static KernelBatch validate(KernelBatch b) {
        String problem = KernelBatchCheck.problem(b);
        if (problem != null) {
            throw new Rejection(Rejection.BAD_KERNEL_BATCH, problem);
        }
        return b;
    }
}
