package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

import io.stepline.events.KernelBatch;

/** A length or count the message cannot hold is refused before Avro allocates for it (found by {@link EventSerdesFuzzTest}). */
class MessageDecoderTest {

    private static byte[] current(AvroSerde<?> serde, byte... body) {
        byte[] header = EventSerdesFuzzTest.header(org.apache.avro.specific.SpecificData.get().getSchema(serde.type()));
        byte[] m = Arrays.copyOf(header, header.length + body.length);
        System.arraycopy(body, 0, m, header.length, body.length);
        return m;
    }

    @Test
    void aStringLongerThanTheMessageIsRefusedBeforeItIsAllocated() {
        // instance_id claims 2^31 - 9 bytes (zigzag varint), the message has none
        byte[] m = current(EventSerdes.STEP, (byte) 0xEE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0x0F);
        assertThatThrownBy(() -> EventSerdes.STEP.decode(m)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("StepRecord").hasMessageContaining("string of 2147483639 bytes in a message with 0 bytes left");
        assertThatThrownBy(() -> EventSerdes.STEP_COUNTERS.decode(m)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("string of 2147483639 bytes");
    }

    @Test
    void anArrayBlockOfMoreItemsThanBytesLeftIsRefused() {
        // instance_id "a", rank 0, step_id 0, then a block of 2^31 - 10 kernels
        byte[] m = current(EventSerdes.KERNEL_BATCH, (byte) 2, (byte) 'a', (byte) 0, (byte) 0, (byte) 0xEC, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0x0F);
        assertThatThrownBy(() -> EventSerdes.KERNEL_BATCH.decode(m)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("KernelBatch").hasMessageContaining("array block of 2147483638 items in a message with 0 bytes left");
    }

    @Test
    void everySchemaOfOurRecordsHasArraysWhoseItemsTakeBytes() {
        for (AvroSerde<?> serde : EventSerdesFuzzTest.SERDES) {
            Schema s = org.apache.avro.specific.SpecificData.get().getSchema(serde.type());
            assertThatCode(() -> MessageDecoder.requireItemsTakeBytes(s)).doesNotThrowAnyException();
        }
        Schema nulls = SchemaBuilder.record("R").fields().name("a").type().array().items().nullType().noDefault().endRecord();
        assertThatThrownBy(() -> MessageDecoder.requireItemsTakeBytes(nulls)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("may take no bytes");
        Schema empty = SchemaBuilder.record("S").fields().name("a").type().array().items(SchemaBuilder.record("E").fields().endRecord())
                .noDefault().endRecord();
        assertThatThrownBy(() -> MessageDecoder.requireItemsTakeBytes(empty)).isInstanceOf(IllegalArgumentException.class);
    }
}
