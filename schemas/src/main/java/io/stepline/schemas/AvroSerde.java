package io.stepline.schemas;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
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
 * <p>Decoding reads the message through a {@link MessageDecoder}: a length or item count the
 * message cannot hold is refused before anything is allocated for it, so hostile bytes cost no
 * more memory than their own size.
 *
 * <p>Instances are thread-safe: the encoder, the decoder and the current schema's reader are per thread.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {

    static {
        TrustedPackages.ensureTrusted();
    }

    /** Per thread: the encoder writing the bytes of the record being encoded. */
    private static final ThreadLocal<ByteArrayEncoder> ENCODER = ThreadLocal.withInitial(ByteArrayEncoder::new);
    /** Per thread: the decoder over the body of the message being decoded. */
    private static final ThreadLocal<MessageDecoder> DECODER = ThreadLocal.withInitial(MessageDecoder::new);
    /** Single-object encoding's marker, before the fingerprint. */
    private static final byte MARKER_1 = (byte) 0xC3;
    private static final byte MARKER_2 = (byte) 0x01;
    private static final int HEADER_LENGTH = 10;

    private final Class<T> type;
    /** Single-object encoding's header: C3 01, then the schema's parsing fingerprint, little-endian. */
    private final byte[] header;
    private final DatumWriter<T> writer;
    /** Per older writer schema's fingerprint: the reader resolving its records to the current schema. */
    private final Map<Long, DatumReader<T>> olderReaders = new HashMap<>();
    /** Per thread: the reader of records written with the current schema. */
    private final ThreadLocal<DatumReader<T>> current;
    private final SpecificData generated;
    private final Schema readerSchema;

    private AvroSerde(Class<T> type, Schema readerSchema, List<Schema> olderWriterSchemas) {
        this.type = type;
        this.header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN).put(MARKER_1).put(MARKER_2)
                .putLong(SchemaNormalization.parsingFingerprint64(readerSchema)).array();
        // Writing uses the generated classes' own encoders: the same bytes as the generic writer,
        // without its per-field schema walk, into an array (ByteArrayEncoder) instead of through
        // Avro's buffered or direct encoders and an output stream. Reading uses
        // them too for records written with the current schema (the header says so), and keeps the
        // generic resolver for records written with older schemas.
        SpecificData generated = new SpecificData(type.getClassLoader());
        this.generated = generated;
        this.readerSchema = readerSchema;
        generated.setCustomCoders(true);
        // the fast reader builds its own field readers and would not call the custom decoders
        generated.setFastReaderEnabled(false);
        @SuppressWarnings("unchecked")
        DatumWriter<T> w = (DatumWriter<T>) generated.createDatumWriter(readerSchema);
        this.writer = w;
        this.current = ThreadLocal.withInitial(() -> {
            @SuppressWarnings("unchecked")
            DatumReader<T> r = (DatumReader<T>) generated.createDatumReader(readerSchema);
            return r;
        });
        MessageDecoder.requireItemsTakeBytes(readerSchema);
        // older records are resolved as Avro's BinaryMessageDecoder resolves them (the same data model), over a MessageDecoder
        SpecificData resolving = new SpecificData(type.getClassLoader());
        for (Schema older : olderWriterSchemas) {
            MessageDecoder.requireItemsTakeBytes(older);
            @SuppressWarnings("unchecked")
            DatumReader<T> r = (DatumReader<T>) resolving.createDatumReader(older, readerSchema);
            olderReaders.put(SchemaNormalization.parsingFingerprint64(older), r);
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
        try {
            MessageDecoder in = body(bytes);
            return isCurrent(bytes) ? current.get().read(null, in) : older(bytes).read(null, in);
        } catch (IOException | RuntimeException e) {
            throw notA(e);
        }
    }

    /**
     * A reader of this type's leading fields into {@code projection}: a generated record whose
     * fields are exactly this schema's first fields, each a scalar or a nullable scalar.
     *
     * @throws IllegalArgumentException when they are not
     */
    public <P extends SpecificRecord> Projection<P> projection(Class<P> projection) {
        return new Projection<>(new LeadingFieldsReader<>(generated, readerSchema, SpecificData.get().getSchema(projection)));
    }

    /** Reads the leading fields of this serde's records into a record type of their own (see {@link #projection}). */
    public final class Projection<P extends SpecificRecord> {
        private final LeadingFieldsReader<P> reader;

        private Projection(LeadingFieldsReader<P> reader) {
            this.reader = reader;
        }

        /**
         * The leading fields of an encoded record. The rest of a record written with the current
         * schema is not read; one written with an older schema is decoded whole first.
         *
         * @throws SerializationException as {@link AvroSerde#decode}
         */
        public P decode(byte[] bytes) {
            try {
                MessageDecoder in = body(bytes);
                return isCurrent(bytes) ? reader.read(in) : reader.of(older(bytes).read(null, in));
            } catch (IOException | RuntimeException e) {
                throw notA(e);
            }
        }

        /** The leading fields of a decoded record. */
        public P of(T whole) {
            return reader.of(whole);
        }

        /**
         * A whole record carrying the projection's fields, and every other field at its schema
         * default (for a step: no phases, no trace ids, nothing degraded).
         */
        public T withDefaults(P projected) {
            @SuppressWarnings("unchecked")
            T whole = (T) generated.newRecord(null, readerSchema);
            for (Schema.Field f : readerSchema.getFields()) {
                whole.put(f.pos(), f.pos() < projected.getSchema().getFields().size() ? projected.get(f.pos()) : generated.getDefaultValue(f));
            }
            return whole;
        }

        /** The fields read, in order. */
        public List<String> fieldNames() {
            return reader.fieldNames();
        }
    }

    /**
     * Whether {@code bytes} carry the single-object header of this type: its current schema's or a
     * known older version's fingerprint (the body is not read).
     */
    public boolean wrote(byte[] bytes) {
        if (bytes == null || bytes.length < HEADER_LENGTH || bytes[0] != MARKER_1 || bytes[1] != MARKER_2) {
            return false;
        }
        return isCurrent(bytes) || olderReaders.containsKey(ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong());
    }

    /** This thread's decoder positioned at the body of {@code bytes}, after the single-object header. */
    private static MessageDecoder body(byte[] bytes) throws IOException {
        if (bytes.length < HEADER_LENGTH || bytes[0] != MARKER_1 || bytes[1] != MARKER_2) {
            throw new IOException("no single-object header (C3 01 and an 8-byte schema fingerprint) in " + bytes.length + " bytes");
        }
        return DECODER.get().reset(bytes, HEADER_LENGTH, bytes.length - HEADER_LENGTH);
    }

    /** Whether {@code bytes} were written with the current schema. */
    private boolean isCurrent(byte[] bytes) {
        return Arrays.equals(bytes, 0, HEADER_LENGTH, header, 0, HEADER_LENGTH);
    }

    /** The reader of the older writer schema whose fingerprint {@code bytes} carry. */
    private DatumReader<T> older(byte[] bytes) throws IOException {
        long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        DatumReader<T> r = olderReaders.get(fingerprint);
        if (r == null) {
            throw new IOException(String.format("no known writer schema has fingerprint %016x", fingerprint));
        }
        return r;
    }

    private SerializationException notA(Exception e) {
        return new SerializationException("not a " + type.getSimpleName() + " in Avro single-object encoding: " + e.getMessage(), e);
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
