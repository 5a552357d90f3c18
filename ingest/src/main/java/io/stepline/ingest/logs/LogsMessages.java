package io.stepline.ingest.logs;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.LogsData;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.resource.v1.Resource;

import io.stepline.ingest.validation.Rejection;

/**
 * OTLP {@code LogsData} messages of log lines, as the OpenTelemetry Collector's {@code filelog}
 * receiver and kafka exporter ({@code otlp_proto}) write them on {@code otlp_logs}: one log record
 * per line, the line as the string body, the file name in the record attribute
 * {@link #FILE_NAME}, the read time as {@code observed_time_unix_nano}. Stepline's file ingest
 * writes the same, with the instance in the resource attribute {@link #INSTANCE}.
 */
public final class LogsMessages {
    public static final String INSTANCE = "service.instance.id";
    /** The filelog receiver's default record attribute. */
    public static final String FILE_NAME = "log.file.name";
    /** Set instead of (or with) the name when the receiver has {@code include_file_path}. */
    public static final String FILE_PATH = "log.file.path";
    /** Scope of the records Stepline's file ingest writes. */
    public static final String SCOPE = "io.stepline.ingest.logs";

    private LogsMessages() {}

    /**
     * One line with the log source it belongs to.
     *
     * @param source             the source name (instance id of data-parallel rank 0), null when the
     *                           record names none (no {@link #INSTANCE}, no file name)
     * @param referenceUnixNanos when the line was read: observed time, else the record's time, else 0
     */
    public record SourcedLine(String source, String text, long referenceUnixNanos) {}

    /** The text lines of a {@code LogsData} (or {@code ExportLogsServiceRequest}: same wire format); records without a text body are left out. */
    public static List<SourcedLine> lines(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new Rejection(Rejection.MALFORMED_PROTOBUF, "empty otlp_logs message");
        }
        LogsData data;
        try {
            data = LogsData.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw new Rejection(Rejection.MALFORMED_PROTOBUF, "not an OTLP LogsData message: " + e.getMessage());
        }
        List<SourcedLine> out = new ArrayList<>();
        for (ResourceLogs rl : data.getResourceLogsList()) {
            String resourceSource = string(rl.getResource().getAttributesList(), INSTANCE);
            for (ScopeLogs sl : rl.getScopeLogsList()) {
                for (LogRecord r : sl.getLogRecordsList()) {
                    String text = text(r.getBody());
                    if (text == null) {
                        continue;
                    }
                    String source = resourceSource;
                    if (source == null) {
                        String file = string(r.getAttributesList(), FILE_NAME);
                        file = file != null ? file : string(r.getAttributesList(), FILE_PATH);
                        source = file == null ? null : LogInstances.fromFileName(file);
                    }
                    long ref = r.getObservedTimeUnixNano() != 0 ? r.getObservedTimeUnixNano() : r.getTimeUnixNano();
                    // the filelog receiver keeps a line's newline out of the body, a hand-made record may not
                    out.add(new SourcedLine(source == null || source.isBlank() ? null : source, stripNewline(text), ref));
                }
            }
        }
        return out;
    }

    /** A {@code LogsData} of lines of one source, as file ingest writes it. */
    public static LogsData of(String source, String fileName, List<String> lines, long observedUnixNanos) {
        ScopeLogs.Builder scope = ScopeLogs.newBuilder().setScope(InstrumentationScope.newBuilder().setName(SCOPE));
        KeyValue file = KeyValue.newBuilder().setKey(FILE_NAME).setValue(AnyValue.newBuilder().setStringValue(fileName)).build();
        for (String line : lines) {
            scope.addLogRecords(LogRecord.newBuilder().setObservedTimeUnixNano(observedUnixNanos)
                    .setBody(AnyValue.newBuilder().setStringValue(line)).addAttributes(file));
        }
        Resource resource = Resource.newBuilder()
                .addAttributes(KeyValue.newBuilder().setKey(INSTANCE).setValue(AnyValue.newBuilder().setStringValue(source))).build();
        return LogsData.newBuilder().addResourceLogs(ResourceLogs.newBuilder().setResource(resource).addScopeLogs(scope)).build();
    }

    private static String text(AnyValue body) {
        return switch (body.getValueCase()) {
            case STRING_VALUE -> body.getStringValue();
            case BYTES_VALUE -> body.getBytesValue().toString(StandardCharsets.UTF_8);
            default -> null;
        };
    }

    private static String string(List<KeyValue> attributes, String key) {
        String v = null;
        for (KeyValue kv : attributes) {
            if (kv.getKey().equals(key) && kv.getValue().getValueCase() == AnyValue.ValueCase.STRING_VALUE) {
                v = kv.getValue().getStringValue(); // the last one, as OTLP says a repeated key means
            }
        }
        return v;
    }

    private static String stripNewline(String s) {
        int n = s.length();
        while (n > 0 && (s.charAt(n - 1) == '\n' || s.charAt(n - 1) == '\r')) {
            n--;
        }
        return n == s.length() ? s : s.substring(0, n);
    }
}
