package io.stepline.schemas;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.message.BinaryMessageDecoder;
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
 * <p>Instances are thread-safe: the encoder and Avro's message decoder keep per-thread buffers.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {

    static {
        TrustedPackages.ensureTrusted();
    }

    /** Per thread: the encoder writing the bytes of the record being encoded. */
    private static final ThreadLocal<ByteArrayEncoder> ENCODER = ThreadLocal.withInitial(ByteArrayEncoder::new);

    private final Class<T> type;
    /** Single-object encoding's header: C3 01, then the schema's parsing fingerprint, little-endian. */
    private final byte[] header;
    private final DatumWriter<T> writer;
    private final BinaryMessageDecoder<T> decoder;
    /** Per thread: the reader of records written with the current schema, and its decoder. */
    private final ThreadLocal<CurrentReader<T>> current;
    private final LeadingFieldsReader<T> leading;

    private AvroSerde(Class<T> type, Schema readerSchema, List<Schema> olderWriterSchemas) {
        this.type = type;
        this.header = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
                .putLong(SchemaNormalization.parsingFingerprint64(readerSchema)).array();
        // Writing uses the generated classes' own encoders: the same bytes as the generic writer,
        // without its per-field schema walk, into an array (ByteArrayEncoder) instead of through
        // Avro's buffered or direct encoders and an output stream. Reading uses
        // them too for records written with the current schema (the header says so), and keeps the
        // generic resolver for records written with older schemas.
        SpecificData generated = new SpecificData(type.getClassLoader());
        generated.setCustomCoders(true);
        // the fast reader builds its own field readers and would not call the custom decoders
        generated.setFastReaderEnabled(false);
        @SuppressWarnings("unchecked")
        DatumWriter<T> w = (DatumWriter<T>) generated.createDatumWriter(readerSchema);
        this.writer = w;
        this.current = ThreadLocal.withInitial(() -> {
            @SuppressWarnings("unchecked")
            DatumReader<T> r = (DatumReader<T>) generated.createDatumReader(readerSchema);
            return new CurrentReader<>(r);
        });
        this.leading = new LeadingFieldsReader<>(generated, readerSchema);
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

    /** The record in Avro single-object encoding. */
    public byte[] encode(T record) {
        ByteArrayEncoder out = ENCODER.get();
        try {
            out.reset();
            out.writeFixed(header, 0, header.length);
            writer.write(record, out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
        }
    }

    /** Writes the fields of one record, in the schema's order, as Avro's binary encoding has them. */
    @FunctionalInterface
    public interface FieldsWriter {
        void write(org.apache.avro.io.Encoder out) throws IOException;
    }

    /**
     * A record of this type written field by field by {@code fields}, in single-object encoding: for
     * state kept in arrays, which {@link #encode} would first need boxed into a record (the
     * detector's model cells, one per step). The same bytes as {@link #encode} of the equivalent
     * record as long as {@code fields} writes what the schema says; callers test that.
     */
    public byte[] encodeFields(FieldsWriter fields) {
        ByteArrayEncoder out = ENCODER.get();
        try {
            out.reset();
            out.writeFixed(header, 0, header.length);
            fields.write(out);
            return out.toByteArray();
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
        return decode(bytes, false);
    }

    /**
     * Decodes only the leading fields of a record (see {@link #leadingFieldNames()}); the others are
     * left null. Records written with an older schema are decoded whole.
     *
     * @throws SerializationException as {@link #decode}
     */
    public T decodeLeading(byte[] bytes) {
        return decode(bytes, true);
    }

    private T decode(byte[] bytes, boolean leadingOnly) {
        try {
            if (bytes.length >= header.length && Arrays.equals(bytes, 0, header.length, header, 0, header.length)) {
                CurrentReader<T> r = current.get();
                r.in = DecoderFactory.get().binaryDecoder(bytes, header.length, bytes.length - header.length, r.in);
                return leadingOnly ? leading.read(r.in) : r.reader.read(null, r.in);
            }
            return decoder.decode(bytes);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException(
                    "not a " + type.getSimpleName() + " in Avro single-object encoding: " + e.getMessage(), e);
        }
    }

    /** The fields {@link #decodeLeading} fills: those before the first that is not a scalar or a nullable scalar. */
    public List<String> leadingFieldNames() {
        return leading.fieldNames();
    }

    private static final class CurrentReader<T> {
        final DatumReader<T> reader;
        BinaryDecoder in;

        CurrentReader(DatumReader<T> reader) {
            this.reader = reader;
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
