package io.stepline.schemas.otlp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

class OtlpProtoFramesTest {
    private static TracesData traces(String name) {
        return TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder().addScopeSpans(
                ScopeSpans.newBuilder().addSpans(Span.newBuilder().setName(name).setStartTimeUnixNano(1).setEndTimeUnixNano(2)))).build();
    }

    @Test
    void framesAreBigEndianSizesFollowedByTheMessageAndReadBackInOrder() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OtlpProtoFrames.write(traces("a"), out);
        OtlpProtoFrames.write(traces("bb"), out);
        byte[] bytes = out.toByteArray();
        int size = traces("a").getSerializedSize();
        assertThat(Arrays.copyOf(bytes, 4)).containsExactly(0, 0, 0, size);
        OtlpProtoFrames.Reader r = new OtlpProtoFrames.Reader(new ByteArrayInputStream(bytes), 1024);
        assertThat(TracesData.parseFrom(r.next())).isEqualTo(traces("a"));
        assertThat(TracesData.parseFrom(r.next())).isEqualTo(traces("bb"));
        assertThat(r.next()).isNull();
    }

    @Test
    void aFileCutInsideAFrameIsReportedWithWhatWasRead() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OtlpProtoFrames.write(traces("a"), out);
        byte[] whole = out.toByteArray();
        byte[] cut = Arrays.copyOf(whole, whole.length - 2);
        OtlpProtoFrames.Reader r = new OtlpProtoFrames.Reader(new ByteArrayInputStream(cut), 1024);
        assertThatThrownBy(r::next).isInstanceOfSatisfying(OtlpProtoFrames.BrokenFrameException.class, e -> {
            assertThat(e).hasMessageContaining("ends inside a frame");
            assertThat(e.bytes()).isEqualTo(cut);
        });
        assertThat(r.next()).as("nothing is read after a broken frame").isNull();

        OtlpProtoFrames.Reader header = new OtlpProtoFrames.Reader(new ByteArrayInputStream(new byte[] {0, 0}), 1024);
        assertThatThrownBy(header::next).isInstanceOf(OtlpProtoFrames.BrokenFrameException.class).hasMessageContaining("4-byte size");
    }

    @Test
    void sizesBeyondTheCapAreRefusedBeforeAllocating() {
        byte[] text = "{\"resourceSpans\":[]}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        OtlpProtoFrames.Reader r = new OtlpProtoFrames.Reader(new ByteArrayInputStream(text), OtlpProtoFrames.DEFAULT_MAX_FRAME_BYTES);
        assertThatThrownBy(r::next).isInstanceOf(OtlpProtoFrames.BrokenFrameException.class).hasMessageContaining("beyond the 67108864-byte limit");
        assertThatThrownBy(() -> new OtlpProtoFrames.Reader(new ByteArrayInputStream(text), 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
