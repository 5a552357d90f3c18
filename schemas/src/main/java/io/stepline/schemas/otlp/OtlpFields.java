package io.stepline.schemas.otlp;

/**
 * Field numbers and wire types of the OTLP trace messages (opentelemetry/proto/trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto), for the hand-written codecs: the simulator's
 * encoder writes them and ingest's reader reads them (both checked against protobuf-java by their
 * differential tests). Compile-time constants, so a reader can switch on {@code FIELD << 3 | WIRE}.
 */
public final class OtlpFields {
    private OtlpFields() {}

    // wire types
    public static final int VARINT = 0;
    public static final int FIXED64 = 1;
    public static final int LEN = 2;
    public static final int FIXED32 = 5;

    // TracesData (and ExportTraceServiceRequest: the same wire format)
    public static final int TRACES_DATA_RESOURCE_SPANS = 1;

    // ResourceSpans
    public static final int RESOURCE_SPANS_RESOURCE = 1;
    public static final int RESOURCE_SPANS_SCOPE_SPANS = 2;
    public static final int RESOURCE_SPANS_SCHEMA_URL = 3;

    // Resource
    public static final int RESOURCE_ATTRIBUTES = 1;

    // ScopeSpans
    public static final int SCOPE_SPANS_SCOPE = 1;
    public static final int SCOPE_SPANS_SPANS = 2;
    public static final int SCOPE_SPANS_SCHEMA_URL = 3;

    // InstrumentationScope
    public static final int SCOPE_NAME = 1;
    public static final int SCOPE_VERSION = 2;
    public static final int SCOPE_ATTRIBUTES = 3;
    public static final int SCOPE_DROPPED_ATTRIBUTES_COUNT = 4;

    // Span
    public static final int SPAN_TRACE_ID = 1;
    public static final int SPAN_SPAN_ID = 2;
    public static final int SPAN_TRACE_STATE = 3;
    public static final int SPAN_PARENT_SPAN_ID = 4;
    public static final int SPAN_NAME = 5;
    public static final int SPAN_KIND = 6;
    public static final int SPAN_START_TIME_UNIX_NANO = 7;
    public static final int SPAN_END_TIME_UNIX_NANO = 8;
    public static final int SPAN_ATTRIBUTES = 9;
    public static final int SPAN_DROPPED_ATTRIBUTES_COUNT = 10;
    public static final int SPAN_EVENTS = 11;
    public static final int SPAN_DROPPED_EVENTS_COUNT = 12;
    public static final int SPAN_DROPPED_LINKS_COUNT = 14;
    public static final int SPAN_FLAGS = 16;

    // Span.Event
    public static final int EVENT_TIME_UNIX_NANO = 1;
    public static final int EVENT_NAME = 2;
    public static final int EVENT_ATTRIBUTES = 3;

    // KeyValue
    public static final int KEY_VALUE_KEY = 1;
    public static final int KEY_VALUE_VALUE = 2;

    // AnyValue (a oneof)
    public static final int ANY_STRING = 1;
    public static final int ANY_BOOL = 2;
    public static final int ANY_INT = 3;
    public static final int ANY_DOUBLE = 4;
    public static final int ANY_BYTES = 7;

    // Span.SpanKind
    public static final int SPAN_KIND_INTERNAL = 1;
    public static final int SPAN_KIND_SERVER = 2;
}
