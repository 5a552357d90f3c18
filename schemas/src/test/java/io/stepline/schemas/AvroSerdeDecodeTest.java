package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.stream.Stream;

import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Records written with the current schema are read with the generated decoders: the same records Avro's message decoder gives. */
class AvroSerdeDecodeTest {

    static Stream<SpecificRecord> everyRecordType() {
        return SerdeRoundTripTest.Samples.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyRecordType")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void currentSchemaRecordsDecodeAsAvrosMessageDecoderDecodesThem(SpecificRecord record) throws Exception {
        AvroSerde serde = AvroSerde.of(record.getClass());
        byte[] bytes = serde.encode(record);
        BinaryMessageDecoder reference = new BinaryMessageDecoder<>(new SpecificData(), record.getSchema());
        Object expected = reference.decode(bytes);
        assertThat(serde.decode(bytes)).isEqualTo(expected).isEqualTo(record);
        // decoding twice on one thread reuses the decoder: nothing of the first record leaks into the second
        assertThat(serde.decode(bytes)).isEqualTo(record);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyRecordType")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void aBodyCutShortIsASerializationException(SpecificRecord record) {
        AvroSerde serde = AvroSerde.of(record.getClass());
        byte[] bytes = serde.encode(record);
        byte[] cut = Arrays.copyOf(bytes, 11);
        assertThatThrownBy(() -> serde.decode(cut)).isInstanceOf(SerializationException.class)
                .hasMessageContaining(record.getClass().getSimpleName());
    }
}
