package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

class BatchedRecordsTest {

    private static StepRecord step(long id) {
        StepRecord s = SerdeRoundTripTest.Samples.step();
        s.setStepId(id);
        return s;
    }

    private static StepVerdict verdict(long id) {
        return StepVerdict.newBuilder().setInstanceId("i-1").setStepId(id).setStartUnixNano(1).setEndUnixNano(2)
                .setLatencyNs(12_000_000L).setExpectedNs(4e6).setBoundNs(6e6).setDeviationRatio(3.0)
                .setVerdict(Verdict.NORMAL).setSeverity(Severity.NONE).setModelKind("robust").setModelVersion(7)
                .setProcessedTokens(128).build();
    }

    @Test
    void aBatchCarriesItsItemsBytesInOrder() {
        List<byte[]> encoded = new ArrayList<>();
        for (long id = 10; id < 14; id++) {
            encoded.add(EventSerdes.STEP.encode(step(id)));
        }
        byte[] record = BatchedRecords.STEPS.join("i-1", encoded);

        assertThat(BatchedRecords.STEPS.isBatch(record)).isTrue();
        assertThat(BatchedRecords.STEPS.count(record)).isEqualTo(4);
        assertThat(BatchedRecords.STEPS.count(BatchedRecords.STEPS.join("i-1", List.of()))).isZero();
        List<byte[]> many = java.util.Collections.nCopies(300, encoded.get(0));
        assertThat(BatchedRecords.STEPS.count(BatchedRecords.STEPS.join("i-1", many))).isEqualTo(300);
        assertThat(BatchedRecords.STEPS.split(record)).containsExactlyElementsOf(encoded);
        assertThat(BatchedRecords.STEPS.decode(record)).extracting(StepRecord::getStepId).containsExactly(10L, 11L, 12L, 13L);
        assertThat(BatchedRecords.STEPS.decode(record).get(2)).isEqualTo(step(12));
    }

    @Test
    void aSingleRecordAsEarlierProducersWroteItIsOneItem() {
        byte[] one = EventSerdes.STEP.encode(step(5));
        assertThat(BatchedRecords.STEPS.isBatch(one)).isFalse();
        assertThat(BatchedRecords.STEPS.count(one)).isEqualTo(1);
        assertThat(BatchedRecords.STEPS.split(one)).containsExactly(one);
        assertThat(BatchedRecords.STEPS.decode(one)).containsExactly(step(5));

        byte[] v = EventSerdes.VERDICT.encode(verdict(5));
        assertThat(BatchedRecords.VERDICTS.decode(v)).containsExactly(verdict(5));
        assertThat(BatchedRecords.VERDICTS.decode(BatchedRecords.VERDICTS.join("i-1", List.of(v, EventSerdes.VERDICT.encode(verdict(6))))))
                .containsExactly(verdict(5), verdict(6));
    }

    @Test
    void theTwoTopicsBatchesAreToldApart() {
        byte[] steps = BatchedRecords.STEPS.join("i-1", List.of(EventSerdes.STEP.encode(step(1))));
        byte[] verdicts = BatchedRecords.VERDICTS.join("i-1", List.of(EventSerdes.VERDICT.encode(verdict(1))));
        assertThat(BatchedRecords.VERDICTS.isBatch(steps)).isFalse();
        assertThat(BatchedRecords.STEPS.isBatch(verdicts)).isFalse();
        // a verdict batch given as a step is one item that is not a step: decoding says so
        assertThatThrownBy(() -> BatchedRecords.STEPS.decode(verdicts)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("not a StepRecord");
    }

    @Test
    void aBatchWhoseBodyIsCutShortIsRefused() {
        byte[] record = BatchedRecords.STEPS.join("i-1", List.of(EventSerdes.STEP.encode(step(1)), EventSerdes.STEP.encode(step(2))));
        byte[] cut = Arrays.copyOf(record, record.length - 20);
        assertThat(BatchedRecords.STEPS.isBatch(cut)).isTrue();
        assertThatThrownBy(() -> BatchedRecords.STEPS.split(cut)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("not a StepBatch");
        assertThatThrownBy(() -> BatchedRecords.STEPS.count(cut)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("not a StepBatch");
    }

    @Test
    void anItemThatIsNotARecordIsCarriedAndRefusedWhenDecoded() {
        byte[] record = BatchedRecords.STEPS.join("i-1", List.of(EventSerdes.STEP.encode(step(1)), new byte[] {9, 9}));
        assertThat(BatchedRecords.STEPS.split(record)).hasSize(2);
        assertThat(BatchedRecords.STEPS.split(record).get(1)).containsExactly(9, 9);
        assertThatThrownBy(() -> BatchedRecords.STEPS.decode(record)).isInstanceOf(SerializationException.class);
    }
}
