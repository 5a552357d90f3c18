package io.stepline.ingest.otlp;

import java.nio.charset.StandardCharsets;

import com.google.protobuf.InvalidProtocolBufferException;
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
