package io.stepline.schemas;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serde for a generated Avro record using Avro single-object encoding
 * (2-byte marker, 8-byte schema fingerprint, binary body). No schema registry is needed:
 * the fingerprint identifies the writer schema, and every earlier version of the schema that
 * {@link SchemaHistory} knows is registered with the decoder so that records written by an
 * older producer are resolved to the current reader schema.
 *
 * <p>Instances are thread-safe: Avro's message encoder and decoder keep per-thread buffers.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {

    static {
        TrustedPackages.ensureTrusted();
    }

    private final Class<T> type;
    private final BinaryMessageEncoder<T> encoder;
    private final BinaryMessageDecoder<T> decoder;

    private AvroSerde(Class<T> type, Schema readerSchema, List<Schema> olderWriterSchemas) {
        this.type = type;
        // Writing uses the generated classes' own encoders: the same bytes as the generic writer,
        // without its per-field schema walk. Reading keeps the generic resolver, which resolves
        // records written with older schemas.
        SpecificData writeModel = new SpecificData(type.getClassLoader());
        writeModel.setCustomCoders(true);
        // not copied by the encoder: encode() copies its thread's buffer once into the result
        this.encoder = new BinaryMessageEncoder<>(writeModel, readerSchema, false);
        this.decoder = new BinaryMessageDecoder<>(new SpecificData(type.getClassLoader()), readerSchema);
        for (Schema older : olderWriterSchemas) {
            decoder.addSchema(older);
        }
    }

    /** A serde for {@code type}, able to read every historical writer schema of that type. */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
        Objects.requireNonNull(type, "type");
        Schema schema = SpecificData.get().getSchema(type);
        return new AvroSerde<>(type, schema, SchemaHistory.olderVersionsOf(schema.getFullName()));
    }

    /** A serde that additionally accepts the given older writer schemas (used by tests and tools). */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type, List<Schema> olderWriterSchemas) {
        Schema schema = SpecificData.get().getSchema(type);
        return new AvroSerde<>(type, schema, olderWriterSchemas);
    }

    public Class<T> type() {
        return type;
    }

    public byte[] encode(T record) {
        try {
            ByteBuffer buf = encoder.encode(record);
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
        }
    }

    /**
     * Decodes one record.
     *
     * @throws SerializationException when the bytes are not a single-object-encoded record of a
     *     known version of this schema
     */
    public T decode(byte[] bytes) {
        try {
            return decoder.decode(bytes);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException(
                    "not a " + type.getSimpleName() + " in Avro single-object encoding: " + e.getMessage(), e);
        }
    }

    @Override
    public Serializer<T> serializer() {
        return (topic, data) -> data == null ? null : encode(data);
    }

    @Override
    public Deserializer<T> deserializer() {
        return (topic, data) -> data == null ? null : decode(data);
    }
}
