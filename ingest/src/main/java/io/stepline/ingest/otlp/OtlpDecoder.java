package io.stepline.ingest.otlp;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.TracesData;

import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.otlp.OtlpJson;

/**
 * Decodes a message of the Collector's kafka exporter ({@code otlp_proto} or {@code otlp_json};
 * a whole batch or a single span's worth) or an OTLP/HTTP body. An ExportTraceServiceRequest and
 * a TracesData have the same wire format.
 */
public final class OtlpDecoder {
    private OtlpDecoder() {}

    public static TracesData decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new Rejection(Rejection.MALFORMED_PROTOBUF, "empty message");
        }
        if (looksLikeJson(bytes)) {
            return json(bytes);
        }
        return protobuf(bytes);
    }

    /**
     * The message's resources, as {@link #decode} would give them: protobuf is read by
     * {@link OtlpSpanReader} when it can, and otherwise decoded (or rejected) by {@link #decode}.
     */
    public static List<SpanFragment> fragments(byte[] bytes) {
        if (bytes != null && bytes.length > 0 && !looksLikeJson(bytes)) {
            List<SpanFragment> read = OtlpSpanReader.traces(bytes);
            if (read != null) {
                return read;
            }
        }
        List<SpanFragment> out = new ArrayList<>();
        for (ResourceSpans rs : decode(bytes).getResourceSpansList()) {
            out.add(SpanFragment.of(rs));
        }
        return out;
    }

    /** One encoded {@code ResourceSpans} (a fragment re-keyed through a topic). */
    public static SpanFragment fragment(byte[] bytes) {
        SpanFragment read = OtlpSpanReader.resourceSpans(bytes);
        if (read != null) {
            return read;
        }
        try {
            return SpanFragment.of(ResourceSpans.parseFrom(bytes));
        } catch (InvalidProtocolBufferException e) {
            throw new Rejection(Rejection.MALFORMED_PROTOBUF, "fragment not decodable: " + e.getMessage());
        }
    }

    public static TracesData protobuf(byte[] bytes) {
        try {
            TracesData td = TracesData.parseFrom(bytes);
            if (td.getResourceSpansCount() == 0) {
                throw new Rejection(Rejection.MALFORMED_PROTOBUF, "no resourceSpans in " + bytes.length + " bytes");
            }
            return td;
        } catch (InvalidProtocolBufferException e) {
            throw new Rejection(Rejection.MALFORMED_PROTOBUF, "not an OTLP traces protobuf: " + e.getMessage());
        }
    }

    public static TracesData json(byte[] bytes) {
        return json(new String(bytes, StandardCharsets.UTF_8));
    }

    public static TracesData json(String text) {
        try {
            return OtlpJson.read(text);
        } catch (IllegalArgumentException e) {
            throw new Rejection(Rejection.MALFORMED_JSON, "not OTLP/JSON traces: " + e.getMessage());
        }
    }

    static boolean looksLikeJson(byte[] b) {
        for (byte x : b) {
            if (x == ' ' || x == '\n' || x == '\r' || x == '\t') {
                continue;
            }
            return x == '{';
        }
        return false;
    }
}
