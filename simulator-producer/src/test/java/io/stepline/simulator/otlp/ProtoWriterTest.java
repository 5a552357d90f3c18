package io.stepline.simulator.otlp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.Test;

class ProtoWriterTest {

    @Test
    void varintSizesAreProtobufs() {
        SplittableRandom rng = new SplittableRandom(1);
        long[] edges = {0, 1, 127, 128, 16_383, 16_384, (1L << 35) - 1, 1L << 35, Long.MAX_VALUE, -1, Long.MIN_VALUE};
        for (long v : edges) {
            assertThat(ProtoWriter.varintSize(v)).as("%d", v).isEqualTo(CodedOutputStream.computeUInt64SizeNoTag(v));
        }
        for (int i = 0; i < 10_000; i++) {
            long v = rng.nextLong() >>> rng.nextInt(64);
            assertThat(ProtoWriter.varintSize(v)).as("%d", v).isEqualTo(CodedOutputStream.computeUInt64SizeNoTag(v));
        }
    }

    /** Nested messages whose bodies need one, two and three length bytes, with every guess of it, and a buffer that has to grow. */
    @Test
    void nestedMessagesOfEverySizeMatchProtobufJava() {
        for (int nameLength : new int[] {0, 5, 120, 127, 128, 300, 20_000}) {
            String name = "n".repeat(nameLength);
            ScopeSpans expected = ScopeSpans.newBuilder().setScope(InstrumentationScope.newBuilder().setName("scope"))
                    .addSpans(Span.newBuilder().setName(name).setKind(Span.SpanKind.SPAN_KIND_INTERNAL).setStartTimeUnixNano(1234567890123L)
                            .setTraceId(ByteString.copyFrom(new byte[] {1, 2, 3})))
                    .build();
            for (int reserved = 1; reserved <= 3; reserved++) {
                ProtoWriter w = new ProtoWriter(16);
                int scope = w.begin(1, 3);
                w.stringField(1, "scope");
                w.end(scope);
                int span = w.begin(2, reserved);
                w.bytesField(1, new byte[] {1, 2, 3});
                w.stringField(5, name);
                w.varintField(6, 1);
                w.fixed64Field(7, 1234567890123L);
                w.fixed64Field(8, 0);
                w.end(span);
                assertThat(w.toByteArray()).as("name of %d bytes, %d length bytes reserved", nameLength, reserved)
                        .isEqualTo(expected.toByteArray());
            }
        }
    }
}
