package io.stepline.ingest.otlp;

import static io.stepline.schemas.otlp.OtlpFields.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import io.stepline.schemas.otlp.StepAttributes;

/**
 * Reads an OTLP traces protobuf into {@link SpanFragment}s without building protobuf-java objects
 * for the spans steps are made of, which is where ingest spent most of its time: ids stay in the
 * message bytes, span names and attribute keys are compared as bytes, and of the attributes only
 * the batch summary of a step span and {@code worker.rank} are kept; scopes are only checked.
 * Resources, spans other than step and phase spans (an {@code llm_request}, say), and step or phase
 * spans holding more (events, links, a status, array or map values, fields this reader does not
 * know, ids that are not 8 bytes) are decoded by protobuf-java.
 *
 * <p>The reader only accepts what protobuf-java would decode to the same values: it checks every
 * field's wire type, length and UTF-8 as protobuf-java does. On anything else (malformed bytes, an
 * unknown field outside a span, a message field protobuf-java would merge) it returns null, and the
 * caller decodes the message with protobuf-java, which accepts or rejects it as it always did.
 */
final class OtlpSpanReader {
    /**
     * Decodes, with protobuf-java, a message this reader already walked (on first use of a lazy
     * span or fragment): a refusal here is a bug in the reader, not bad input.
     */
    static <T> T decodeAccepted(com.google.protobuf.Parser<T> parser, byte[] bytes, int offset, int length, String what) {
        try {
            return parser.parseFrom(bytes, offset, length);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalStateException("OtlpSpanReader accepted a " + what + " protobuf-java refuses", e);
        }
    }

    static final String WORKER_RANK = StepAttributes.WORKER_RANK;

    private static final byte[] WORKER_RANK_BYTES = WORKER_RANK.getBytes(StandardCharsets.US_ASCII);
    /** Span names that make a span a step (the first) or a phase, as bytes, with the String the records carry. */
    private static final byte[][] NAME_BYTES;
    private static final String[] NAMES;

    static {
        List<String> names = new ArrayList<>();
        names.add(StepMapper.STEP_SPAN);
        names.addAll(StepMapper.ENGINE_PHASES);
        names.addAll(StepMapper.RANK_PHASES);
        NAMES = names.toArray(new String[0]);
        NAME_BYTES = new byte[NAMES.length][];
        for (int i = 0; i < NAMES.length; i++) {
            NAME_BYTES[i] = NAMES[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    /** Input this reader leaves to protobuf-java: the whole message, or one span ({@link DecodeSpan}). */
    private static class NotRead extends Exception {
        private static final NotRead INSTANCE = new NotRead();

        NotRead() {
            super(null, null, false, false);
        }
    }

    private static final class DecodeSpan extends NotRead {
        private static final DecodeSpan INSTANCE = new DecodeSpan();
    }

    /** What {@link #attribute(int)} returns for {@code worker.rank}. */
    private static final int WORKER_RANK_SLOT = -2;

    private final byte[] bytes;
    private final CodedInputStream in;
    /** The value of the attribute {@link #attribute(int)} read last. */
    private AnyValue.ValueCase lastCase;
    private long lastRaw;
    /** The batch-summary slot the next attribute of the span probably has. */
    private int expectedSlot;

    private OtlpSpanReader(byte[] bytes) {
        this.bytes = bytes;
        this.in = CodedInputStream.newInstance(bytes);
    }

    /**
     * The resources of a {@code TracesData} (or {@code ExportTraceServiceRequest}: the same wire
     * format); null when protobuf-java has to decode it (also when it holds no resource).
     */
    static List<SpanFragment> traces(byte[] bytes) {
        OtlpSpanReader r = new OtlpSpanReader(bytes);
        try {
            List<SpanFragment> out = new ArrayList<>();
            for (int tag = r.in.readTag(); tag != 0; tag = r.in.readTag()) {
                if (tag != tag(TRACES_DATA_RESOURCE_SPANS, LEN)) {
                    return null;
                }
                out.add(r.resourceSpans(r.length()));
            }
            return out.isEmpty() ? null : out;
        } catch (IOException | NotRead e) {
            return null;
        }
    }

    /** One {@code ResourceSpans}; null when protobuf-java has to decode it. */
    static SpanFragment resourceSpans(byte[] bytes) {
        OtlpSpanReader r = new OtlpSpanReader(bytes);
        try {
            return r.resourceSpans(bytes.length);
        } catch (IOException | NotRead e) {
            return null;
        }
    }

    private static int tag(int field, int wireType) {
        return field << 3 | wireType;
    }

    private int position() {
        return in.getTotalBytesRead();
    }

    /** Reads a length prefix; that many bytes follow at {@link #position()}, within the enclosing message. */
    private int length() throws IOException, NotRead {
        int len = in.readRawVarint32();
        int limit = in.getBytesUntilLimit();
        if (len < 0 || len > (limit >= 0 ? limit : bytes.length - position())) {
            throw NotRead.INSTANCE; // protobuf-java says how it is broken
        }
        return len;
    }

    private SpanFragment resourceSpans(int len) throws IOException, NotRead {
        int start = position();
        int outer = in.pushLimit(len);
        Resource resource = null;
        List<FragmentSpan> spans = new ArrayList<>();
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (tag == tag(RESOURCE_SPANS_RESOURCE, LEN) && resource == null) {
                int n = length();
                resource = Resource.parser().parseFrom(bytes, position(), n);
                in.skipRawBytes(n);
            } else if (tag == tag(RESOURCE_SPANS_SCOPE_SPANS, LEN)) {
                scopeSpans(length(), spans);
            } else if (tag == tag(RESOURCE_SPANS_SCHEMA_URL, LEN)) {
                string(length());
            } else {
                throw NotRead.INSTANCE;
            }
        }
        in.popLimit(outer);
        return SpanFragment.read(resource == null ? Resource.getDefaultInstance() : resource, spans, bytes, start, len);
    }

    private void scopeSpans(int len, List<FragmentSpan> spans) throws IOException, NotRead {
        int outer = in.pushLimit(len);
        boolean scope = false;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (tag == tag(SCOPE_SPANS_SCOPE, LEN) && !scope) {
                scope(length());
                scope = true;
            } else if (tag == tag(SCOPE_SPANS_SPANS, LEN)) {
                spans.add(span(length()));
            } else if (tag == tag(SCOPE_SPANS_SCHEMA_URL, LEN)) {
                string(length());
            } else {
                throw NotRead.INSTANCE;
            }
        }
        in.popLimit(outer);
    }

    /** Checks an InstrumentationScope as protobuf-java would decode it; nothing of it is needed. */
    private void scope(int len) throws IOException, NotRead {
        int end = position() + len;
        while (position() < end) {
            switch (in.readTag()) {
                case SCOPE_NAME << 3 | LEN, SCOPE_VERSION << 3 | LEN -> string(length());
                case SCOPE_ATTRIBUTES << 3 | LEN -> attribute(length()); // anything but a scalar value: protobuf-java decides
                case SCOPE_DROPPED_ATTRIBUTES_COUNT << 3 | VARINT -> in.readRawVarint64();
                default -> throw NotRead.INSTANCE;
            }
        }
        if (position() != end) {
            throw NotRead.INSTANCE;
        }
    }

    private FragmentSpan span(int len) throws IOException, NotRead {
        int start = position();
        int outer = in.pushLimit(len);
        FragmentSpan span;
        try {
            span = readSpan(start, len);
        } catch (DecodeSpan d) {
            in.popLimit(outer);
            in.skipRawBytes(start + len - position());
            return FragmentSpan.of(Span.parser().parseFrom(bytes, start, len));
        }
        in.popLimit(outer);
        return span;
    }

    private FragmentSpan readSpan(int start, int len) throws IOException, NotRead {
        int name = -1;
        int spanId = -1;
        int parentId = -1;
        int traceId = -1;
        int traceIdLength = 0;
        long startNs = 0;
        long endNs = 0;
        Integer rank = null;
        StepSummaryValues summary = null;
        expectedSlot = 0;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            switch (tag) {
                case SPAN_TRACE_ID << 3 | LEN -> {
                    traceIdLength = length();
                    traceId = position();
                    in.skipRawBytes(traceIdLength);
                }
                case SPAN_SPAN_ID << 3 | LEN -> spanId = id(length(), false);
                case SPAN_TRACE_STATE << 3 | LEN -> string(length());
                case SPAN_PARENT_SPAN_ID << 3 | LEN -> parentId = id(length(), true);
                case SPAN_NAME << 3 | LEN -> name = name(length());
                case SPAN_KIND << 3 | VARINT, SPAN_DROPPED_ATTRIBUTES_COUNT << 3 | VARINT, SPAN_DROPPED_EVENTS_COUNT << 3 | VARINT,
                        SPAN_DROPPED_LINKS_COUNT << 3 | VARINT -> in.readRawVarint64();
                case SPAN_START_TIME_UNIX_NANO << 3 | FIXED64 -> startNs = in.readFixed64();
                case SPAN_END_TIME_UNIX_NANO << 3 | FIXED64 -> endNs = in.readFixed64();
                case SPAN_FLAGS << 3 | FIXED32 -> in.readFixed32();
                case SPAN_ATTRIBUTES << 3 | LEN -> {
                    int attr = attribute(length());
                    if (attr == WORKER_RANK_SLOT) {
                        if (lastCase == AnyValue.ValueCase.INT_VALUE) {
                            rank = (int) lastRaw;
                        }
                    } else if (attr >= 0) {
                        summary = summary == null ? new StepSummaryValues(bytes) : summary;
                        summary.set(attr, lastCase, lastRaw);
                        expectedSlot = attr + 1;
                    }
                }
                default -> throw DecodeSpan.INSTANCE;
            }
        }
        if (spanId < 0 || name < 0) {
            throw DecodeSpan.INSTANCE;
        }
        FragmentSpan.Kind kind = name == 0 ? FragmentSpan.Kind.STEP : FragmentSpan.Kind.PHASE;
        return new FragmentSpan(bytes, start, len, kind, NAMES[name], startNs, endNs, spanId, parentId, Math.max(traceId, 0), traceIdLength, rank,
                name == 0 ? summary : null);
    }

    /** An id's offset; one that is not 8 bytes (or, for a parent, empty: -1) is left to protobuf-java. */
    private int id(int len, boolean mayBeEmpty) throws IOException, NotRead {
        int at = position();
        in.skipRawBytes(len);
        if (len == 8) {
            return at;
        }
        if (len == 0 && mayBeEmpty) {
            return -1;
        }
        throw DecodeSpan.INSTANCE;
    }

    /** The index of a step or phase name in {@link #NAMES}; any other span is decoded by protobuf-java. */
    private int name(int len) throws IOException, NotRead {
        int at = position();
        in.skipRawBytes(len);
        for (int i = 0; i < NAME_BYTES.length; i++) {
            if (Arrays.equals(NAME_BYTES[i], 0, NAME_BYTES[i].length, bytes, at, at + len)) {
                return i; // ASCII, so valid UTF-8
            }
        }
        utf8(at, len);
        throw DecodeSpan.INSTANCE;
    }

    /**
     * Reads one KeyValue of {@code len} bytes; returns its batch-summary slot, {@link #WORKER_RANK_SLOT},
     * or -1 for a key nothing needs, with the value in {@link #lastCase} / {@link #lastRaw}. Its end is
     * checked by position rather than a pushed limit, which would keep CodedInputStream off its fast
     * path for the varint at the end of every value.
     */
    private int attribute(int len) throws IOException, NotRead {
        int end = position() + len;
        int key = -1;
        int keyLength = 0;
        boolean value = false;
        lastCase = AnyValue.ValueCase.VALUE_NOT_SET;
        lastRaw = 0;
        while (position() < end) {
            int tag = in.readTag();
            if (tag == tag(KEY_VALUE_KEY, LEN)) {
                if (key >= 0) {
                    utf8(key, keyLength); // a key given twice: the last one counts, both must be UTF-8
                }
                keyLength = length();
                key = position();
                in.skipRawBytes(keyLength);
            } else if (tag == tag(KEY_VALUE_VALUE, LEN) && !value) {
                value = true;
                anyValue(length());
            } else {
                throw DecodeSpan.INSTANCE;
            }
        }
        if (position() != end) {
            throw NotRead.INSTANCE; // a field runs past the KeyValue: protobuf-java says how it is broken
        }
        if (key < 0) {
            return -1;
        }
        // a key equal to one of ours is ASCII, so valid UTF-8; any other is checked
        if (Arrays.equals(WORKER_RANK_BYTES, 0, WORKER_RANK_BYTES.length, bytes, key, key + keyLength)) {
            return WORKER_RANK_SLOT;
        }
        int slot = StepSummaryValues.slot(bytes, key, keyLength, expectedSlot);
        if (slot < 0) {
            utf8(key, keyLength);
        }
        return slot;
    }

    /** One AnyValue of {@code len} bytes and a scalar type (the last one set wins, as in protobuf-java's oneof). */
    private void anyValue(int len) throws IOException, NotRead {
        int end = position() + len;
        while (position() < end) {
            switch (in.readTag()) {
                case ANY_STRING << 3 | LEN -> {
                    int n = length();
                    lastRaw = (long) position() << 32 | n;
                    string(n);
                    lastCase = AnyValue.ValueCase.STRING_VALUE;
                }
                case ANY_BOOL << 3 | VARINT -> {
                    lastRaw = in.readBool() ? 1 : 0;
                    lastCase = AnyValue.ValueCase.BOOL_VALUE;
                }
                case ANY_INT << 3 | VARINT -> {
                    lastRaw = in.readInt64();
                    lastCase = AnyValue.ValueCase.INT_VALUE;
                }
                case ANY_DOUBLE << 3 | FIXED64 -> {
                    lastRaw = in.readRawLittleEndian64();
                    lastCase = AnyValue.ValueCase.DOUBLE_VALUE;
                }
                case ANY_BYTES << 3 | LEN -> {
                    in.skipRawBytes(length());
                    lastRaw = 0;
                    lastCase = AnyValue.ValueCase.BYTES_VALUE;
                }
                default -> throw DecodeSpan.INSTANCE;
            }
        }
        if (position() != end) {
            throw NotRead.INSTANCE;
        }
    }

    /** Skips a string field's bytes, checking they are UTF-8 as protobuf-java does for proto3 strings. */
    private void string(int len) throws IOException, NotRead {
        int at = position();
        in.skipRawBytes(len);
        utf8(at, len);
    }

    private void utf8(int at, int len) throws NotRead {
        for (int i = at; i < at + len; i++) {
            if (bytes[i] < 0) {
                if (!UnsafeByteOperations.unsafeWrap(bytes, at, len).isValidUtf8()) {
                    throw NotRead.INSTANCE; // which protobuf-java refuses
                }
                return;
            }
        }
    }
}
