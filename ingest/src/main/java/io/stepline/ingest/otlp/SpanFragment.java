package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.List;

import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;

/**
 * One resource's spans (an OTLP {@code ResourceSpans}): decoded by protobuf-java, or read by
 * {@link OtlpSpanReader} from the message bytes, which are kept to decode it whole on demand.
 */
public final class SpanFragment {
    private final Resource resource;
    private final List<FragmentSpan> spans;
    private final byte[] bytes;
    private final int offset;
    private final int length;
    private ResourceSpans decoded;
    private InstanceIdentity identity;

    private SpanFragment(Resource resource, List<FragmentSpan> spans, byte[] bytes, int offset, int length, ResourceSpans decoded) {
        this.resource = resource;
        this.spans = spans;
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        this.decoded = decoded;
    }

    public static SpanFragment of(ResourceSpans rs) {
        List<FragmentSpan> spans = new ArrayList<>();
        for (ScopeSpans ss : rs.getScopeSpansList()) {
            spans.addAll(FragmentSpan.of(ss.getSpansList()));
        }
        return new SpanFragment(rs.getResource(), spans, null, 0, 0, rs);
    }

    /** A fragment read from {@code bytes[offset, offset + length)}, a ResourceSpans. */
    static SpanFragment read(Resource resource, List<FragmentSpan> spans, byte[] bytes, int offset, int length) {
        return new SpanFragment(resource, spans, bytes, offset, length, null);
    }

    public Resource resource() {
        return resource;
    }

    /** Every span of every scope, in message order. */
    public List<FragmentSpan> spans() {
        return spans;
    }

    /** @throws io.stepline.ingest.validation.Rejection when the resource names no valid instance */
    public InstanceIdentity identity() {
        if (identity == null) {
            identity = InstanceIdentity.of(resource);
        }
        return identity;
    }

    /** The whole ResourceSpans, decoded from the message bytes on first use. */
    public ResourceSpans resourceSpans() {
        if (decoded == null) {
            decoded = OtlpSpanReader.decodeAccepted(ResourceSpans.parser(), bytes, offset, length, "ResourceSpans");
        }
        return decoded;
    }
}
