package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.ingest.kernels.KernelBatchValidator;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.json.EventJson;

class KernelBatchValidatorTest {
    private static KernelRecord k(String name, long start, long end) {
        return KernelRecord.newBuilder().setName(name).setKind(KernelKind.KERNEL).setStream(7).setStartNs(start).setEndNs(end).build();
    }

    private static KernelBatch batch(String inst, int rank, long step, KernelRecord... ks) {
        return KernelBatch.newBuilder().setInstanceId(inst).setRank(rank).setStepId(step).setKernels(List.of(ks)).build();
    }

    @Test
    void aWellFormedBatchPassesAndSurvivesTheJsonLineForm() {
        KernelBatch b = batch("vllm-0", 1, 42, k("ampere_fp16_gemm", 100, 250), k("Memcpy HtoD", 250, 250));
        assertThat(KernelBatchValidator.validate(EventJson.fromJson(EventJson.toJson(b), KernelBatch.class))).isEqualTo(b);
    }

    @Test
    void brokenBatchesAreRejectedWithTheKernelBatchReason() {
        List<KernelBatch> bad = List.of(
                batch(" ", 0, 1, k("a", 1, 2)),
                batch("i", -1, 1, k("a", 1, 2)),
                batch("i", 0, -5, k("a", 1, 2)),
                batch("i", 0, 1, k("", 1, 2)),
                batch("i", 0, 1, k("a", 1, 2), k("b", 10, 9)),
                batch("i", 0, 1, k("a", 0, 700_000_000_000L)));
        for (KernelBatch b : bad) {
            assertThatThrownBy(() -> KernelBatchValidator.validate(b)).isInstanceOf(Rejection.class)
                    .satisfies(e -> assertThat(((Rejection) e).code()).isEqualTo(Rejection.BAD_KERNEL_BATCH));
        }
    }

    @Test
    void anUnknownKernelKindDoesNotParse() {
        String json = EventJson.toJson(batch("i", 0, 1, k("a", 1, 2))).replace("\"KERNEL\"", "\"WARP\"");
        assertThatThrownBy(() -> EventJson.fromJson(json, KernelBatch.class)).isInstanceOf(IllegalArgumentException.class);
    }
}
