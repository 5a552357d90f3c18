package io.stepline.ingest.topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import io.stepline.schemas.BatchedRecords;

/**
 * Collects the steps the assembler completes while it handles one input (a message's fragment, or
 * a punctuation's expiry) and hands them on as one record per instance ({@link BatchedRecords#STEPS}):
 * a step then costs the broker a share of a record, not a record. Nothing waits past the input that
 * completed it, so a step reaches the detector as soon as before, and in the same transaction.
 */
final class StepBatcher {
    private final Map<String, List<byte[]>> pending = new LinkedHashMap<>();
    private final BiConsumer<String, byte[]> emit;

    /** @param emit takes an instance id and one encoded record of its steps */
    StepBatcher(BiConsumer<String, byte[]> emit) {
        this.emit = emit;
    }

    /** One encoded step of {@code instance}; a batch that reaches {@link BatchedRecords#MAX_ITEMS_PER_RECORD} goes at once. */
    void add(String instance, byte[] step) {
        List<byte[]> steps = pending.computeIfAbsent(instance, k -> new ArrayList<>());
        steps.add(step);
        if (steps.size() >= BatchedRecords.MAX_ITEMS_PER_RECORD) {
            pending.remove(instance);
            emit.accept(instance, BatchedRecords.STEPS.join(instance, steps));
        }
    }

    /** Emits what was collected, one record per instance in the order their first step came. */
    void flush() {
        if (pending.isEmpty()) {
            return;
        }
        for (Map.Entry<String, List<byte[]>> e : pending.entrySet()) {
            emit.accept(e.getKey(), BatchedRecords.STEPS.join(e.getKey(), e.getValue()));
        }
        pending.clear();
    }
}
