package io.stepline.schemas.otlp;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import io.opentelemetry.proto.trace.v1.TracesData;

/**
 * OTLP/JSON for traces as the OpenTelemetry specification and the Collector's file exporter write
 * it: lowerCamelCase keys, trace and span ids as hex (not base64), 64-bit integers (times,
 * {@code intValue}) as decimal strings, enums as integers. Protobuf's own JsonFormat differs on
 * ids, so both directions are done here, on the trace messages only.
 *
 * <p>Reading takes what producers other than the Collector write too, as the proto3 JSON mapping
 * allows its parsers: the proto field names ({@code resource_spans}, {@code start_time_unix_nano},
 * {@code int_value}) beside lowerCamelCase, integers as numbers or strings, enums by name
 * ({@code SPAN_KIND_INTERNAL}) or number, and ids in base64 (protobuf's JsonFormat, Python's
 * {@code MessageToJson}) beside hex: an id's length tells the two apart (16 bytes are 32 hex digits
 * or 24 base64 characters). Collectors before OTLP 0.15 wrote {@code instrumentationLibrarySpans};
 * those are read as scope spans.
 */
public final class OtlpJson {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    private OtlpJson() {}

    /** One line of JSON (no newline) for a TracesData (wire-identical to ExportTraceServiceRequest). */
    public static String write(TracesData data) {
        StringWriter sw = new StringWriter(4096);
        write(data, sw);
        return sw.toString();
    }

    /** The same JSON written straight into {@code out} (left open), without an intermediate string. */
    public static void write(TracesData data, java.io.Writer out) {
        try (JsonGenerator g = FACTORY.createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)) {
            g.writeStartObject();
            g.writeArrayFieldStart("resourceSpans");
            for (ResourceSpans rs : data.getResourceSpansList()) {
                g.writeStartObject();
                g.writeObjectFieldStart("resource");
                attributes(g, rs.getResource().getAttributesList());
                g.writeEndObject();
                g.writeArrayFieldStart("scopeSpans");
                for (ScopeSpans ss : rs.getScopeSpansList()) {
                    g.writeStartObject();
                    g.writeObjectFieldStart("scope");
                    g.writeStringField("name", ss.getScope().getName());
                    if (!ss.getScope().getVersion().isEmpty()) {
                        g.writeStringField("version", ss.getScope().getVersion());
                    }
                    g.writeEndObject();
                    g.writeArrayFieldStart("spans");
                    for (Span s : ss.getSpansList()) {
                        span(g, s);
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                }
                g.writeEndArray();
                if (!rs.getSchemaUrl().isEmpty()) {
                    g.writeStringField("schemaUrl", rs.getSchemaUrl());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void span(JsonGenerator g, Span s) throws IOException {
        g.writeStartObject();
        g.writeStringField("traceId", HEX.formatHex(s.getTraceId().toByteArray()));
        g.writeStringField("spanId", HEX.formatHex(s.getSpanId().toByteArray()));
        if (!s.getParentSpanId().isEmpty()) {
            g.writeStringField("parentSpanId", HEX.formatHex(s.getParentSpanId().toByteArray()));
        }
        g.writeStringField("name", s.getName());
        g.writeNumberField("kind", s.getKindValue());
        g.writeStringField("startTimeUnixNano", Long.toUnsignedString(s.getStartTimeUnixNano()));
        g.writeStringField("endTimeUnixNano", Long.toUnsignedString(s.getEndTimeUnixNano()));
        attributes(g, s.getAttributesList());
        if (s.getEventsCount() > 0) {
            g.writeArrayFieldStart("events");
            for (Span.Event e : s.getEventsList()) {
                g.writeStartObject();
                g.writeStringField("timeUnixNano", Long.toUnsignedString(e.getTimeUnixNano()));
                g.writeStringField("name", e.getName());
                attributes(g, e.getAttributesList());
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        g.writeObjectFieldStart("status");
        if (s.getStatus().getCodeValue() != 0) {
            g.writeNumberField("code", s.getStatus().getCodeValue());
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void attributes(JsonGenerator g, Iterable<KeyValue> attrs) throws IOException {
        Iterator<KeyValue> it = attrs.iterator();
        if (!it.hasNext()) {
            return;
        }
        g.writeArrayFieldStart("attributes");
        while (it.hasNext()) {
            KeyValue kv = it.next();
            g.writeStartObject();
            g.writeStringField("key", kv.getKey());
            g.writeFieldName("value");
            value(g, kv.getValue());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void value(JsonGenerator g, AnyValue v) throws IOException {
        g.writeStartObject();
        switch (v.getValueCase()) {
            case STRING_VALUE -> g.writeStringField("stringValue", v.getStringValue());
            case BOOL_VALUE -> g.writeBooleanField("boolValue", v.getBoolValue());
            case INT_VALUE -> g.writeStringField("intValue", Long.toString(v.getIntValue()));
            case DOUBLE_VALUE -> g.writeNumberField("doubleValue", v.getDoubleValue());
            case BYTES_VALUE -> g.writeStringField("bytesValue", Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray()));
            case ARRAY_VALUE -> {
                g.writeObjectFieldStart("arrayValue");
                g.writeArrayFieldStart("values");
                for (AnyValue item : v.getArrayValue().getValuesList()) {
                    value(g, item);
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            case KVLIST_VALUE -> {
                g.writeObjectFieldStart("kvlistValue");
                attributesAs(g, "values", v.getKvlistValue().getValuesList());
                g.writeEndObject();
            }
            default -> {
                // VALUE_NOT_SET: an empty object, as the spec allows
            }
        }
        g.writeEndObject();
    }

    private static void attributesAs(JsonGenerator g, String field, Iterable<KeyValue> attrs) throws IOException {
        g.writeArrayFieldStart(field);
        for (KeyValue kv : attrs) {
            g.writeStartObject();
            g.writeStringField("key", kv.getKey());
            g.writeFieldName("value");
            value(g, kv.getValue());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /**
     * Parses one OTLP/JSON traces object (a TracesData or ExportTraceServiceRequest).
     *
     * @throws IllegalArgumentException with the path of the offending field when the JSON is not OTLP
     */
    public static TracesData read(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("OTLP/JSON must be an object with resourceSpans");
        }
        TracesData.Builder out = TracesData.newBuilder();
        JsonNode rss = field(root, "resourceSpans", "resource_spans");
        if (rss == null || !rss.isArray()) {
            throw new IllegalArgumentException("missing resourceSpans array");
        }
        int i = 0;
        for (JsonNode rs : rss) {
            String path = "resourceSpans[" + i++ + "]";
            ResourceSpans.Builder rb = out.addResourceSpansBuilder();
            JsonNode res = rs.get("resource");
            if (res != null) {
                Resource.Builder resB = rb.getResourceBuilder();
                readAttributes(res.get("attributes"), path + ".resource", resB::addAttributes);
            }
            JsonNode schemaUrl = field(rs, "schemaUrl", "schema_url");
            if (schemaUrl != null && !schemaUrl.isNull()) {
                rb.setSchemaUrl(schemaUrl.asText());
            }
            JsonNode sss = field(rs, "scopeSpans", "scope_spans");
            boolean library = sss == null;
            if (library) {
                sss = field(rs, "instrumentationLibrarySpans", "instrumentation_library_spans");
            }
            if (sss == null) {
                continue;
            }
            requireArray(sss, path + ".scopeSpans");
            int j = 0;
            for (JsonNode ss : sss) {
                String sp = path + ".scopeSpans[" + j++ + "]";
                ScopeSpans.Builder sb = rb.addScopeSpansBuilder();
                JsonNode scope = library ? field(ss, "instrumentationLibrary", "instrumentation_library") : ss.get("scope");
                if (scope != null) {
                    InstrumentationScope.Builder scb = sb.getScopeBuilder();
                    if (scope.hasNonNull("name")) {
                        scb.setName(scope.get("name").asText());
                    }
                    if (scope.hasNonNull("version")) {
                        scb.setVersion(scope.get("version").asText());
                    }
                }
                JsonNode spans = ss.get("spans");
                if (spans == null) {
                    continue;
                }
                requireArray(spans, sp + ".spans");
                int k = 0;
                for (JsonNode s : spans) {
                    sb.addSpans(readSpan(s, sp + ".spans[" + k++ + "]"));
                }
            }
        }
        return out.build();
    }

    private static Span readSpan(JsonNode s, String path) {
        Span.Builder b = Span.newBuilder();
        b.setTraceId(id(field(s, "traceId", "trace_id"), 16, path + ".traceId"));
        b.setSpanId(id(field(s, "spanId", "span_id"), 8, path + ".spanId"));
        JsonNode parent = field(s, "parentSpanId", "parent_span_id");
        if (parent != null && !parent.isNull() && !parent.asText().isEmpty()) {
            b.setParentSpanId(id(parent, 8, path + ".parentSpanId"));
        }
        b.setName(text(s.get("name"), path + ".name"));
        if (s.hasNonNull("kind")) {
            b.setKindValue(enumValue(s.get("kind"), "SPAN_KIND_", Span.SpanKind::valueOf));
        }
        b.setStartTimeUnixNano(uint64(field(s, "startTimeUnixNano", "start_time_unix_nano"), path + ".startTimeUnixNano"));
        b.setEndTimeUnixNano(uint64(field(s, "endTimeUnixNano", "end_time_unix_nano"), path + ".endTimeUnixNano"));
        readAttributes(s.get("attributes"), path, b::addAttributes);
        JsonNode events = s.get("events");
        if (events != null) {
            requireArray(events, path + ".events");
            int i = 0;
            for (JsonNode e : events) {
                String ep = path + ".events[" + i++ + "]";
                Span.Event.Builder eb = b.addEventsBuilder();
                eb.setName(text(e.get("name"), ep + ".name"));
                JsonNode time = field(e, "timeUnixNano", "time_unix_nano");
                eb.setTimeUnixNano(time != null && !time.isNull() ? uint64(time, ep + ".timeUnixNano") : 0);
                readAttributes(e.get("attributes"), ep, eb::addAttributes);
            }
        }
        JsonNode st = s.get("status");
        if (st != null && st.hasNonNull("code")) {
            b.setStatus(Status.newBuilder().setCodeValue(enumValue(st.get("code"), "STATUS_CODE_", Status.StatusCode::valueOf)));
        }
        return b.build();
    }

    private static void readAttributes(JsonNode attrs, String path, java.util.function.Consumer<KeyValue> sink) {
        if (attrs == null || attrs.isNull()) {
            return;
        }
        requireArray(attrs, path + ".attributes");
        int i = 0;
        for (JsonNode kv : attrs) {
            String p = path + ".attributes[" + i++ + "]";
            sink.accept(KeyValue.newBuilder().setKey(text(kv.get("key"), p + ".key")).setValue(readValue(kv.get("value"), p + ".value")).build());
        }
    }

    private static AnyValue readValue(JsonNode v, String path) {
        if (v == null || v.isNull() || !v.isObject() || v.isEmpty()) {
            return AnyValue.getDefaultInstance();
        }
        Map.Entry<String, JsonNode> e = v.fields().next();
        JsonNode x = e.getValue();
        return switch (e.getKey()) {
            case "stringValue", "string_value" -> AnyValue.newBuilder().setStringValue(x.asText()).build();
            case "boolValue", "bool_value" -> {
                if (!x.isBoolean()) {
                    throw new IllegalArgumentException(path + ".boolValue: expected true or false");
                }
                yield AnyValue.newBuilder().setBoolValue(x.asBoolean()).build();
            }
            case "intValue", "int_value" -> AnyValue.newBuilder().setIntValue(int64(x, path + ".intValue")).build();
            case "doubleValue", "double_value" -> {
                if (!x.isNumber() && !(x.isTextual() && isDoubleText(x.asText()))) {
                    throw new IllegalArgumentException(path + ".doubleValue: expected a number, got " + x);
                }
                yield AnyValue.newBuilder().setDoubleValue(x.isNumber() ? x.asDouble() : Double.parseDouble(x.asText())).build();
            }
            case "bytesValue", "bytes_value" -> AnyValue.newBuilder().setBytesValue(base64(x, path + ".bytesValue")).build();
            case "arrayValue", "array_value" -> {
                ArrayValue.Builder ab = ArrayValue.newBuilder();
                JsonNode values = x.get("values");
                if (values != null) {
                    int i = 0;
                    for (JsonNode item : values) {
                        ab.addValues(readValue(item, path + ".arrayValue.values[" + i++ + "]"));
                    }
                }
                yield AnyValue.newBuilder().setArrayValue(ab).build();
            }
            case "kvlistValue", "kvlist_value" -> {
                KeyValueList.Builder kb = KeyValueList.newBuilder();
                readAttributesNamed(x.get("values"), path + ".kvlistValue", kb::addValues);
                yield AnyValue.newBuilder().setKvlistValue(kb).build();
            }
            default -> throw new IllegalArgumentException(path + ": unknown value type '" + e.getKey() + "'");
        };
    }

    private static void readAttributesNamed(JsonNode attrs, String path, java.util.function.Consumer<KeyValue> sink) {
        if (attrs == null) {
            return;
        }
        int i = 0;
        for (JsonNode kv : attrs) {
            String p = path + ".values[" + i++ + "]";
            sink.accept(KeyValue.newBuilder().setKey(text(kv.get("key"), p + ".key")).setValue(readValue(kv.get("value"), p + ".value")).build());
        }
    }

    private static boolean isDoubleText(String s) {
        try {
            Double.parseDouble(s);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static void requireArray(JsonNode n, String path) {
        if (!n.isArray()) {
            throw new IllegalArgumentException(path + ": expected an array");
        }
    }

    private static String text(JsonNode n, String path) {
        if (n == null || !n.isTextual()) {
            throw new IllegalArgumentException(path + ": expected a string");
        }
        return n.asText();
    }

    private static long int64(JsonNode n, String path) {
        try {
            if (n.isIntegralNumber()) {
                return n.longValue();
            }
            if (n.isTextual()) {
                return Long.parseLong(n.asText());
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IllegalArgumentException(path + ": expected an integer, got " + n);
    }

    private static long uint64(JsonNode n, String path) {
        if (n == null) {
            throw new IllegalArgumentException(path + ": missing");
        }
        try {
            if (n.isIntegralNumber()) {
                return n.longValue();
            }
            if (n.isTextual()) {
                return Long.parseUnsignedLong(n.asText());
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IllegalArgumentException(path + ": expected an unsigned integer, got " + n);
    }

    /** An id of {@code bytes} bytes: hex (OTLP/JSON), or base64 (protobuf's JSON mapping), told apart by length. */
    private static ByteString id(JsonNode n, int bytes, String path) {
        String s = text(n, path);
        if (s.length() == bytes * 2) {
            try {
                return ByteString.copyFrom(HEX.parseHex(s));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(path + ": not hex: '" + s + "'");
            }
        }
        if (s.length() == base64Length(bytes) || s.length() == base64Length(bytes) - padding(bytes)) {
            byte[] decoded = decodeBase64(s);
            if (decoded != null && decoded.length == bytes) {
                return ByteString.copyFrom(decoded);
            }
        }
        throw new IllegalArgumentException(path + ": expected " + (bytes * 2) + " hex digits (or " + bytes + " bytes in base64), got '" + s + "'");
    }

    private static int base64Length(int bytes) {
        return (bytes + 2) / 3 * 4;
    }

    private static int padding(int bytes) {
        return (3 - bytes % 3) % 3;
    }

    /** Standard or URL-safe base64, padded or not; null when it is neither. */
    private static byte[] decodeBase64(String s) {
        try {
            return s.indexOf('-') >= 0 || s.indexOf('_') >= 0 ? Base64.getUrlDecoder().decode(s) : Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static ByteString base64(JsonNode n, String path) {
        byte[] b = n.isTextual() ? decodeBase64(n.asText()) : null;
        if (b == null) {
            throw new IllegalArgumentException(path + ": expected base64, got " + n);
        }
        return ByteString.copyFrom(b);
    }

    /** A field under its lowerCamelCase name, else under its proto name (null when neither is there). */
    private static JsonNode field(JsonNode n, String camel, String proto) {
        JsonNode v = n.get(camel);
        return v != null ? v : n.get(proto);
    }

    /**
     * An enum given by number or by name, with or without its prefix ({@code SPAN_KIND_INTERNAL}, {@code INTERNAL}).
     * Stepline reads neither a span's kind nor its status, so a name it does not know is read as unspecified (0)
     * rather than costing the whole message.
     */
    private static <E extends com.google.protobuf.ProtocolMessageEnum> int enumValue(JsonNode n, String prefix,
            java.util.function.Function<String, E> byName) {
        if (n.isIntegralNumber()) {
            return n.intValue();
        }
        if (n.isTextual()) {
            String name = n.asText();
            try {
                return byName.apply(name.startsWith(prefix) ? name : prefix + name).getNumber();
            } catch (IllegalArgumentException e) {
                return 0;
            }
        }
        return 0;
    }
}
