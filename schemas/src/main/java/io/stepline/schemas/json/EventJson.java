package io.stepline.schemas.json;

import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * The plain JSON form of our Avro records, used for JSON-lines files (kernel batches, ground
 * truth, anomalies). Unlike Avro's own JSON encoding, nullable unions are written as the bare
 * value or {@code null} (no {"long": 5} wrappers), enums as their symbol and bytes as base64,
 * so that files are easy to produce and read with any tool. Field names are those of the .avsc.
 * Missing fields take the schema default; unknown fields are rejected, so typos do not pass.
 */
public final class EventJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private EventJson() {}

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public static String toJson(SpecificRecord record) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
            write(g, record.getSchema(), record);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + record.getSchema().getName() + " as JSON", e);
        }
        return out.toString();
    }

    /**
     * JSON lines of records onto a writer it does not close, through one generator: for the files
     * written by the million (kernel batches, truth labels), where a generator and a String per
     * record were most of the cost. {@link #flush} or {@link #close} before the writer is closed.
     */
    public static final class LineWriter implements Closeable, Flushable {
        private final JsonGenerator g;

        public LineWriter(Writer out) throws IOException {
            this.g = MAPPER.getFactory().createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            g.setRootValueSeparator(null);
        }

        /** Writes the record as one line. */
        public void write(SpecificRecord record) throws IOException {
            EventJson.write(g, record.getSchema(), record);
            g.writeRaw('\n');
        }

        @Override
        public void flush() throws IOException {
            g.flush();
        }

        /** Flushes what is buffered; the writer stays open. */
        @Override
        public void close() throws IOException {
            g.close();
        }
    }

    /**
     * Parses one JSON object into a record of {@code type}.
     *
     * @throws IllegalArgumentException naming the offending field when the JSON does not fit the schema
     */
    public static <T extends SpecificRecord> T fromJson(String json, Class<T> type) {
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (node == null) {
            throw new IllegalArgumentException("empty input");
        }
        return fromNode(node, type);
    }

    public static <T extends SpecificRecord> T fromNode(JsonNode node, Class<T> type) {
        Schema schema = SpecificData.get().getSchema(type);
        @SuppressWarnings("unchecked")
        T record = (T) read(schema, node, schema.getName());
        return record;
    }

    /** Streams the value: kernel batches and truth labels are written by the million, a node tree per record cost most of that. */
    private static void write(JsonGenerator g, Schema schema, Object value) throws IOException {
        switch (schema.getType()) {
            case RECORD: {
                IndexedRecord r = (IndexedRecord) value;
                g.writeStartObject();
                for (Schema.Field f : schema.getFields()) {
                    g.writeFieldName(f.name());
                    write(g, f.schema(), r.get(f.pos()));
                }
                g.writeEndObject();
                return;
            }
            case UNION: {
                if (value == null) {
                    g.writeNull();
                    return;
                }
                List<Schema> types = schema.getTypes();
                // ["null", T] (every optional field): no need to ask Avro which branch a non-null value takes
                if (types.size() == 2 && types.get(0).getType() == Schema.Type.NULL) {
                    write(g, types.get(1), value);
                    return;
                }
                write(g, types.get(GenericData.get().resolveUnion(schema, value)), value);
                return;
            }
            case NULL:
                g.writeNull();
                return;
            case ARRAY: {
                g.writeStartArray();
                for (Object item : (Iterable<?>) value) {
                    write(g, schema.getElementType(), item);
                }
                g.writeEndArray();
                return;
            }
            case MAP: {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                    g.writeFieldName(e.getKey().toString());
                    write(g, schema.getValueType(), e.getValue());
                }
                g.writeEndObject();
                return;
            }
            case ENUM:
            case STRING:
                g.writeString(value.toString());
                return;
            case BYTES: {
                ByteBuffer buf = ((ByteBuffer) value).duplicate();
                byte[] bytes = new byte[buf.remaining()];
                buf.get(bytes);
                g.writeString(Base64.getEncoder().encodeToString(bytes));
                return;
            }
            case INT:
                g.writeNumber((Integer) value);
                return;
            case LONG:
                g.writeNumber((Long) value);
                return;
            case FLOAT:
                g.writeNumber((Float) value);
                return;
            case DOUBLE:
                g.writeNumber((Double) value);
                return;
            case BOOLEAN:
                g.writeBoolean((Boolean) value);
                return;
            default:
                throw new IllegalStateException("unsupported Avro type " + schema.getType());
        }
    }

    private static Object read(Schema schema, JsonNode node, String path) {
        switch (schema.getType()) {
            case RECORD: {
                if (!node.isObject()) {
                    throw bad(path, "an object", node);
                }
                IndexedRecord r = (IndexedRecord) SpecificData.get().newRecord(null, schema);
                for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
                    String name = it.next();
                    if (schema.getField(name) == null) {
                        throw new IllegalArgumentException(path + ": unknown field '" + name + "'");
                    }
                }
                for (Schema.Field f : schema.getFields()) {
                    JsonNode child = node.get(f.name());
                    if (child == null) {
                        if (!f.hasDefaultValue()) {
                            throw new IllegalArgumentException(path + "." + f.name() + ": missing required field");
                        }
                        r.put(f.pos(), SpecificData.get().deepCopy(f.schema(), SpecificData.get().getDefaultValue(f)));
                    } else {
                        r.put(f.pos(), read(f.schema(), child, path + "." + f.name()));
                    }
                }
                return r;
            }
            case UNION: {
                if (node.isNull()) {
                    for (Schema s : schema.getTypes()) {
                        if (s.getType() == Schema.Type.NULL) {
                            return null;
                        }
                    }
                    throw bad(path, "a value (not null)", node);
                }
                IllegalArgumentException last = null;
                for (Schema s : schema.getTypes()) {
                    if (s.getType() == Schema.Type.NULL) {
                        continue;
                    }
                    try {
                        return read(s, node, path);
                    } catch (IllegalArgumentException e) {
                        last = e;
                    }
                }
                throw last != null ? last : bad(path, "a value of " + schema, node);
            }
            case NULL:
                if (!node.isNull()) {
                    throw bad(path, "null", node);
                }
                return null;
            case ARRAY: {
                if (!node.isArray()) {
                    throw bad(path, "an array", node);
                }
                List<Object> items = new ArrayList<>(node.size());
                int i = 0;
                for (JsonNode item : node) {
                    items.add(read(schema.getElementType(), item, path + "[" + i++ + "]"));
                }
                return items;
            }
            case MAP: {
                if (!node.isObject()) {
                    throw bad(path, "an object", node);
                }
                Map<String, Object> map = new LinkedHashMap<>();
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    map.put(e.getKey(), read(schema.getValueType(), e.getValue(), path + "." + e.getKey()));
                }
                return map;
            }
            case ENUM: {
                if (!node.isTextual() || !schema.getEnumSymbols().contains(node.asText())) {
                    throw bad(path, "one of " + schema.getEnumSymbols(), node);
                }
                return SpecificData.get().createEnum(node.asText(), schema);
            }
            case STRING:
                if (!node.isTextual()) {
                    throw bad(path, "a string", node);
                }
                return node.asText();
            case BYTES:
                if (!node.isTextual()) {
                    throw bad(path, "a base64 string", node);
                }
                try {
                    return ByteBuffer.wrap(Base64.getDecoder().decode(node.asText()));
                } catch (IllegalArgumentException e) {
                    throw bad(path, "a base64 string", node);
                }
            case INT:
                if (!node.isIntegralNumber() || !node.canConvertToInt()) {
                    throw bad(path, "an int", node);
                }
                return node.intValue();
            case LONG:
                if (!node.isIntegralNumber() || !node.canConvertToLong()) {
                    throw bad(path, "a long integer", node);
                }
                return node.longValue();
            case FLOAT:
                if (!node.isNumber()) {
                    throw bad(path, "a number", node);
                }
                return node.floatValue();
            case DOUBLE:
                if (!node.isNumber()) {
                    throw bad(path, "a number", node);
                }
                return node.doubleValue();
            case BOOLEAN:
                if (!node.isBoolean()) {
                    throw bad(path, "true or false", node);
                }
                return node.booleanValue();
            default:
                throw new IllegalStateException("unsupported Avro type " + schema.getType());
        }
    }

    private static IllegalArgumentException bad(String path, String expected, JsonNode got) {
        String shown = got.toString();
        if (shown.length() > 60) {
            shown = shown.substring(0, 57) + "...";
        }
        return new IllegalArgumentException(path + ": expected " + expected + " but got " + shown);
    }
}
