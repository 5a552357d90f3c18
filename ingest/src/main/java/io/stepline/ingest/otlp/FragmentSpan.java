package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * One span as step assembly sees it: what kind it is, its ids, times and, for a step, its batch
 * summary. Either a protobuf-java {@link Span}, or the fields {@link OtlpSpanReader} read from the
 * message bytes without building one; {@link #span()} decodes those bytes when a span has to be
 * stored, dead-lettered or mapped to request events.
 */
public final class FragmentSpan {
    public enum Kind {
        /** {@code EngineCore::Step}. */
        STEP,
        /** One of the phase spans of a step ({@link StepMapper#isPhase}). */
        PHASE,
        OTHER
    }

    private static final HexFormat HEX = HexFormat.of();

    private final Kind kind;
    private final String name;
    private final long start;
    private final long end;
    private Object idKey;
    private Object parentKey;
    private Span span;
    private String spanIdHex;
    // read from bytes (span == null until decoded)
    private final byte[] bytes;
    private final int offset;
    private final int length;
    private final int spanIdOffset;
    private final int parentIdOffset;
    private final int traceIdOffset;
    private final int traceIdLength;
    private final Integer rank;
    private final StepSummaryValues summary;

    private FragmentSpan(Span span) {
        this.span = span;
        this.name = span.getName();
        this.kind = kindOf(name);
        this.start = span.getStartTimeUnixNano();
        this.end = span.getEndTimeUnixNano();
        this.idKey = key(span.getSpanId());
        this.parentKey = key(span.getParentSpanId());
        this.rank = workerRank(span.getAttributesList());
        this.bytes = null;
        this.offset = this.length = this.spanIdOffset = this.parentIdOffset = this.traceIdOffset = this.traceIdLength = 0;
        this.summary = null;
    }

    /**
     * A span read from {@code bytes[offset, offset + length)}: an 8-byte span id at {@code spanIdOffset},
     * its parent's 8-byte id at {@code parentIdOffset} (negative: none).
     */
    FragmentSpan(byte[] bytes, int offset, int length, Kind kind, String name, long start, long end, int spanIdOffset, int parentIdOffset,
                 int traceIdOffset, int traceIdLength, Integer rank, StepSummaryValues summary) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        this.name = name;
        this.kind = kind;
        this.start = start;
        this.end = end;
        this.spanIdOffset = spanIdOffset;
        this.parentIdOffset = parentIdOffset;
        this.traceIdOffset = traceIdOffset;
        this.traceIdLength = traceIdLength;
        this.rank = rank;
        this.summary = summary;
    }

    public static FragmentSpan of(Span span) {
        return new FragmentSpan(span);
    }

    public static List<FragmentSpan> of(List<Span> spans) {
        List<FragmentSpan> out = new ArrayList<>(spans.size());
        for (Span s : spans) {
            out.add(of(s));
        }
        return out;
    }

    private static Kind kindOf(String name) {
        if (name.equals(StepMapper.STEP_SPAN)) {
            return Kind.STEP;
        }
        return StepMapper.isPhase(name) ? Kind.PHASE : Kind.OTHER;
    }

    /**
     * A span id as a map key: span ids are 8 bytes, held as a long; an id of another length (which
     * OTLP does not allow, but may arrive) as its bytes. Equal keys are equal ids either way.
     */
    private static Object key(ByteString id) {
        return id.size() == 8 ? longAt(id.toByteArray(), 0) : id;
    }

    private static Long longAt(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[off + i] & 0xff);
        }
        return v;
    }

    private static Integer workerRank(List<KeyValue> attributes) {
        Integer rank = null;
        for (KeyValue kv : attributes) {
            if (kv.getKey().equals(OtlpSpanReader.WORKER_RANK) && kv.getValue().hasIntValue()) {
                rank = (int) kv.getValue().getIntValue();
            }
        }
        return rank;
    }

    public Kind kind() {
        return kind;
    }

    public String name() {
        return name;
    }

    public long startTimeUnixNano() {
        return start;
    }

    public long endTimeUnixNano() {
        return end;
    }

    /** The span id as a key that equals {@link #parentKey()} of its children. */
    public Object idKey() {
        if (idKey == null) {
            idKey = longAt(bytes, spanIdOffset);
        }
        return idKey;
    }

    public Object parentKey() {
        if (parentKey == null) {
            parentKey = parentIdOffset < 0 ? ByteString.EMPTY : longAt(bytes, parentIdOffset);
        }
        return parentKey;
    }

    /** {@code worker.rank} when the span has it as an int (the last such), else null. */
    public Integer workerRank() {
        return rank;
    }

    public String spanIdHex() {
        if (spanIdHex == null) {
            spanIdHex = span != null ? HEX.formatHex(span.getSpanId().toByteArray()) : HEX.formatHex(bytes, spanIdOffset, spanIdOffset + 8);
        }
        return spanIdHex;
    }

    public String traceIdHex() {
        return span != null ? HEX.formatHex(span.getTraceId().toByteArray()) : HEX.formatHex(bytes, traceIdOffset, traceIdOffset + traceIdLength);
    }

    /** The span's attributes; read from bytes, a step span keeps only its batch-summary keys. */
    Attributes attributes(String where) {
        return summary != null && span == null ? Attributes.of(summary, where) : Attributes.of(span().getAttributesList(), where);
    }

    /** True when this is a protobuf-java span already; a span read from bytes then has no events. */
    public boolean isDecoded() {
        return span != null;
    }

    /** The protobuf-java span, decoded from the message bytes on first use. */
    public Span span() {
        if (span == null) {
            span = OtlpSpanReader.decodeAccepted(Span.parser(), bytes, offset, length, "span");
        }
        return span;
    }

    public static List<Span> spans(List<FragmentSpan> spans) {
        List<Span> out = new ArrayList<>(spans.size());
        for (FragmentSpan s : spans) {
            out.add(s.span());
        }
        return out;
    }
}
