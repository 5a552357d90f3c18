package io.stepline.schemas.otlp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import org.junit.jupiter.api.Test;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import io.opentelemetry.proto.trace.v1.TracesData;

/** OTLP/JSON as the Collector writes it, and as producers using protobuf's own JSON mapping write it. */
class OtlpJsonTest {
    private static final TracesData TRACES = TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder()
            .setResource(Resource.newBuilder().addAttributes(kv("service.instance.id", AnyValue.newBuilder().setStringValue("vllm-0"))))
            .setSchemaUrl("https://opentelemetry.io/schemas/1.24.0")
            .addScopeSpans(ScopeSpans.newBuilder().setScope(InstrumentationScope.newBuilder().setName("vllm.scheduler.step").setVersion("0.19"))
                    .addSpans(Span.newBuilder()
                            .setTraceId(ByteString.copyFrom(new byte[] {(byte) 0xfb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, (byte) 0xff}))
                            .setSpanId(ByteString.copyFrom(new byte[] {(byte) 0xfe, 2, 3, 4, 5, 6, 7, (byte) 0xfb}))
                            .setParentSpanId(ByteString.copyFrom(new byte[] {9, 9, 9, 9, 9, 9, 9, 9}))
                            .setName("EngineCore::Step").setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                            .setStartTimeUnixNano(1_764_547_200_000_000_000L).setEndTimeUnixNano(1_764_547_200_012_000_000L)
                            .addAttributes(kv("step.id", AnyValue.newBuilder().setIntValue(42)))
                            .addAttributes(kv("kv.usage_gpu_ratio", AnyValue.newBuilder().setDoubleValue(0.25)))
                            .addAttributes(kv("tags", AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder()
                                    .addValues(AnyValue.newBuilder().setBoolValue(true)).addValues(AnyValue.newBuilder().setBytesValue(ByteString.copyFromUtf8("x"))))))
                            .addEvents(Span.Event.newBuilder().setTimeUnixNano(1_764_547_200_001_000_000L).setName("step.BATCH_SUMMARY")
                                    .addAttributes(kv("batch.num_decode_reqs", AnyValue.newBuilder().setIntValue(7))))
                            .setStatus(Status.newBuilder().setCode(Status.StatusCode.STATUS_CODE_ERROR)))))
            .build();

    private static KeyValue kv(String key, AnyValue.Builder value) {
        return KeyValue.newBuilder().setKey(key).setValue(value).build();
    }

    @Test
    void whatStepLineWritesReadsBack() {
        assertThat(OtlpJson.read(OtlpJson.write(TRACES))).isEqualTo(TRACES);
    }

    @Test
    void protobufsOwnJsonMappingReadsTheSameBase64IdsEnumNamesAndEitherFieldNames() throws Exception {
        // what a producer printing OTLP with protobuf's JsonFormat (or Python's MessageToJson) writes: base64 ids,
        // enums by name, 64-bit integers as strings; with and without the proto field names
        String camel = JsonFormat.printer().print(TRACES);
        String proto = JsonFormat.printer().preservingProtoFieldNames().print(TRACES);
        assertThat(camel).contains("\"traceId\": \"+wECAwQFBgcICQoLDA0O/w==\"").contains("SPAN_KIND_INTERNAL");
        assertThat(proto).contains("\"resource_spans\"").contains("\"start_time_unix_nano\"").contains("\"int_value\"");
        assertThat(OtlpJson.read(camel)).isEqualTo(TRACES);
        assertThat(OtlpJson.read(proto)).isEqualTo(TRACES);
    }

    @Test
    void integersAsJsonNumbersAndUnpaddedOrUrlSafeBase64IdsAreRead() {
        String json = OtlpJson.write(TRACES).replace("\"1764547200000000000\"", "1764547200000000000").replace("\"42\"", "42")
                .replace("\"fb0102030405060708090a0b0c0d0eff\"", "\"-wECAwQFBgcICQoLDA0O_w\"");
        assertThat(json).contains("\"intValue\":42").contains("-wECAwQFBgcICQoLDA0O_w");
        assertThat(OtlpJson.read(json)).isEqualTo(TRACES);
    }

    @Test
    void instrumentationLibrarySpansOfCollectorsBeforeOtlp015AreScopeSpans() {
        String json = OtlpJson.write(TRACES).replace("\"scopeSpans\"", "\"instrumentationLibrarySpans\"").replace("\"scope\"", "\"instrumentationLibrary\"");
        assertThat(json).doesNotContain("scopeSpans");
        assertThat(OtlpJson.read(json)).isEqualTo(TRACES);
    }

    @Test
    void anIdOfTheWrongLengthSaysWhatWasExpectedAndWhere() {
        String json = OtlpJson.write(TRACES).replace("fe020304050607fb", "fe0203");
        assertThatThrownBy(() -> OtlpJson.read(json)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resourceSpans[0].scopeSpans[0].spans[0].spanId")
                .hasMessageContaining("expected 16 hex digits (or 8 bytes in base64)");
    }

    @Test
    void aSpanKindOrStatusNameStepLineDoesNotKnowIsUnspecifiedNotARejection() {
        String json = OtlpJson.write(TRACES).replace("\"kind\":1", "\"kind\":\"SPAN_KIND_TELEPORT\"").replace("\"code\":2", "\"code\":\"STATUS_CODE_MAYBE\"");
        Span s = OtlpJson.read(json).getResourceSpans(0).getScopeSpans(0).getSpans(0);
        assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_UNSPECIFIED);
        assertThat(s.getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_UNSET);
        assertThat(s.getAttributesCount()).isEqualTo(3);
    }
}
