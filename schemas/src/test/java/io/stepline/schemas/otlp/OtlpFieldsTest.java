package io.stepline.schemas.otlp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

/** The hand-written codecs' field numbers are the ones protobuf-java generated from the OTLP protos. */
class OtlpFieldsTest {
    @Test
    void everyFieldNumberIsTheGeneratedOne() {
        assertThat(OtlpFields.TRACES_DATA_RESOURCE_SPANS).isEqualTo(TracesData.RESOURCE_SPANS_FIELD_NUMBER);
        assertThat(OtlpFields.RESOURCE_SPANS_RESOURCE).isEqualTo(ResourceSpans.RESOURCE_FIELD_NUMBER);
        assertThat(OtlpFields.RESOURCE_SPANS_SCOPE_SPANS).isEqualTo(ResourceSpans.SCOPE_SPANS_FIELD_NUMBER);
        assertThat(OtlpFields.RESOURCE_SPANS_SCHEMA_URL).isEqualTo(ResourceSpans.SCHEMA_URL_FIELD_NUMBER);
        assertThat(OtlpFields.RESOURCE_ATTRIBUTES).isEqualTo(Resource.ATTRIBUTES_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_SPANS_SCOPE).isEqualTo(ScopeSpans.SCOPE_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_SPANS_SPANS).isEqualTo(ScopeSpans.SPANS_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_SPANS_SCHEMA_URL).isEqualTo(ScopeSpans.SCHEMA_URL_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_NAME).isEqualTo(InstrumentationScope.NAME_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_VERSION).isEqualTo(InstrumentationScope.VERSION_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_ATTRIBUTES).isEqualTo(InstrumentationScope.ATTRIBUTES_FIELD_NUMBER);
        assertThat(OtlpFields.SCOPE_DROPPED_ATTRIBUTES_COUNT).isEqualTo(InstrumentationScope.DROPPED_ATTRIBUTES_COUNT_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_TRACE_ID).isEqualTo(Span.TRACE_ID_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_SPAN_ID).isEqualTo(Span.SPAN_ID_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_TRACE_STATE).isEqualTo(Span.TRACE_STATE_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_PARENT_SPAN_ID).isEqualTo(Span.PARENT_SPAN_ID_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_NAME).isEqualTo(Span.NAME_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_KIND).isEqualTo(Span.KIND_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_START_TIME_UNIX_NANO).isEqualTo(Span.START_TIME_UNIX_NANO_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_END_TIME_UNIX_NANO).isEqualTo(Span.END_TIME_UNIX_NANO_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_ATTRIBUTES).isEqualTo(Span.ATTRIBUTES_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_DROPPED_ATTRIBUTES_COUNT).isEqualTo(Span.DROPPED_ATTRIBUTES_COUNT_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_EVENTS).isEqualTo(Span.EVENTS_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_DROPPED_EVENTS_COUNT).isEqualTo(Span.DROPPED_EVENTS_COUNT_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_DROPPED_LINKS_COUNT).isEqualTo(Span.DROPPED_LINKS_COUNT_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_FLAGS).isEqualTo(Span.FLAGS_FIELD_NUMBER);
        assertThat(OtlpFields.EVENT_TIME_UNIX_NANO).isEqualTo(Span.Event.TIME_UNIX_NANO_FIELD_NUMBER);
        assertThat(OtlpFields.EVENT_NAME).isEqualTo(Span.Event.NAME_FIELD_NUMBER);
        assertThat(OtlpFields.EVENT_ATTRIBUTES).isEqualTo(Span.Event.ATTRIBUTES_FIELD_NUMBER);
        assertThat(OtlpFields.KEY_VALUE_KEY).isEqualTo(KeyValue.KEY_FIELD_NUMBER);
        assertThat(OtlpFields.KEY_VALUE_VALUE).isEqualTo(KeyValue.VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.ANY_STRING).isEqualTo(AnyValue.STRING_VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.ANY_BOOL).isEqualTo(AnyValue.BOOL_VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.ANY_INT).isEqualTo(AnyValue.INT_VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.ANY_DOUBLE).isEqualTo(AnyValue.DOUBLE_VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.ANY_BYTES).isEqualTo(AnyValue.BYTES_VALUE_FIELD_NUMBER);
        assertThat(OtlpFields.SPAN_KIND_INTERNAL).isEqualTo(Span.SpanKind.SPAN_KIND_INTERNAL_VALUE);
        assertThat(OtlpFields.SPAN_KIND_SERVER).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER_VALUE);
    }
}
