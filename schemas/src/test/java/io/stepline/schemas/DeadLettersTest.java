package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.stepline.events.DeadLetter;

class DeadLettersTest {
    @Test
    void keepsReasonOriginAndBytesAndIsKeyedByItsInstance() {
        DeadLetter d = DeadLetters.of("otlp_spans", DeadLetters.origin("otlp_spans", 3, 42), null, "MALFORMED_PROTOBUF", "truncated",
                new byte[] {1, 2, 3}, "i-7");
        assertThat(d.getOrigin()).isEqualTo("otlp_spans-3@42");
        assertThat(d.getReasonCode()).isEqualTo("MALFORMED_PROTOBUF");
        assertThat(d.getReason()).isEqualTo("truncated");
        assertThat(d.getPayload().array()).containsExactly(1, 2, 3);
        assertThat(DeadLetters.key(d)).isEqualTo("i-7");
        // it survives the wire
        assertThat(EventSerdes.DEAD_LETTER.decode(EventSerdes.DEAD_LETTER.encode(d))).isEqualTo(d);
    }

    @Test
    void withoutReasonOrInstanceTheCodeIsTheReasonAndTheKeyIsEmpty() {
        DeadLetter d = DeadLetters.of("stepline.kernels", null, null, "UNDECODABLE_KERNEL_BATCH", null, null);
        assertThat(d.getReason()).isEqualTo("UNDECODABLE_KERNEL_BATCH");
        assertThat(d.getPayload().remaining()).isZero();
        assertThat(DeadLetters.key(d)).isEmpty();
    }

    @Test
    void aPayloadOverTheLimitIsCutAndTheReasonSaysSo() {
        DeadLetter d = DeadLetters.of("file", "f:1", "application/json", "MALFORMED_JSON", "bad", new byte[DeadLetters.MAX_PAYLOAD_BYTES + 10]);
        assertThat(d.getPayload().remaining()).isEqualTo(DeadLetters.MAX_PAYLOAD_BYTES);
        assertThat(d.getReason()).startsWith("bad").contains("truncated");
    }
}
