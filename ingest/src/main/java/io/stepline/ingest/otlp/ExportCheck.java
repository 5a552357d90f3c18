package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

import io.stepline.events.StepRecord;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.validation.Rejection;

/**
 * The stateless checks of ingest run on an export before it is stored: the resource's instance
 * identity, and {@link StepMapper}'s form A and form B batch-summary validation of every step in
 * it. What fails is taken out and returned with its reason, so a receiver can dead-letter it and
 * answer with OTLP partial success (the sender learns at once what will never become a step), and
 * a file's summary can count it; the rest is stored as it came. What needs state (duplicates,
 * ordering, a step's phases in later messages, form B latencies) is still decided by the ingest
 * topology.
 *
 * <p>Refused: a resource without a valid identity (all its spans); an {@code EngineCore::Step}
 * span that fails, with the phase spans of the same export that belong to it (one dead letter
 * holds them all, so none turns into an orphan later); a {@code step.BATCH_SUMMARY} event that
 * fails, taken out of its span (the span and its other events are kept). A span that is refused
 * or kept without some of its events counts as rejected in the OTLP answer.
 */
public final class ExportCheck {
    private ExportCheck() {}

    /** One refused part of an export: why, its bytes, and its instance when the resource named one. */
    public record Refused(Rejection why, byte[] payload, String instanceId) {}

    /**
     * What an export keeps after the checks ({@code keep} is the input itself when nothing was
     * refused), what it refused, and how many spans were refused whole or kept without some events.
     */
    public record Result(TracesData keep, List<Refused> refused, long refusedSpans, long trimmedSpans) {
        /** Spans not stored as sent: the OTLP partial success's {@code rejected_spans}. */
        public long rejectedSpans() {
            return refusedSpans + trimmedSpans;
        }

        public boolean partial() {
            return !refused.isEmpty();
        }

        /** The OTLP partial success's {@code error_message}: counts by reason and the first reason in full; null when nothing was refused. */
        public String errorMessage() {
            if (refused.isEmpty()) {
                return null;
            }
            Map<String, Integer> byCode = new LinkedHashMap<>();
            refused.forEach(r -> byCode.merge(r.why().code(), 1, Integer::sum));
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%d span(s) not accepted as sent (%d refused, %d without some step.BATCH_SUMMARY events): ",
                    rejectedSpans(), refusedSpans, trimmedSpans));
            b.append(byCode.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).reduce((x, y) -> x + ", " + y).orElse(""));
            b.append("; first: ").append(refused.get(0).why().getMessage());
            return b.toString();
        }
    }

    /**
     * Checks every resource and step of {@code td}.
     *
     * @param tally when not null, counts the step records that pass (and their degraded reasons)
     */
    public static Result check(TracesData td, IngestStats tally) {
        List<Refused> refused = new ArrayList<>();
        List<ResourceSpans> kept = new ArrayList<>(td.getResourceSpansCount());
        boolean changed = false;
        long refusedSpans = 0;
        long trimmedSpans = 0;
        for (ResourceSpans rs : td.getResourceSpansList()) {
            InstanceIdentity id;
            try {
                id = InstanceIdentity.of(rs.getResource());
            } catch (Rejection r) {
                refused.add(new Refused(r, rs.toByteArray(), null));
                refusedSpans += rs.getScopeSpansList().stream().mapToLong(ScopeSpans::getSpansCount).sum();
                changed = true;
                continue;
            }
            ResourceCheck c = new ResourceCheck(rs, id, tally, refused);
            if (c.result == rs) {
                kept.add(rs);
            } else {
                changed = true;
                refusedSpans += c.refusedSpans;
                trimmedSpans += c.trimmedSpans;
                if (c.result != null) {
                    kept.add(c.result);
                }
            }
        }
        TracesData keep = changed ? TracesData.newBuilder().addAllResourceSpans(kept).build() : td;
        return new Result(keep, refused, refusedSpans, trimmedSpans);
    }

    /** The checks of one resource's spans; {@code result} is the resource itself when nothing was refused, null when nothing is left. */
    private static final class ResourceCheck {
        ResourceSpans result;
        long refusedSpans;
        long trimmedSpans;

        ResourceCheck(ResourceSpans rs, InstanceIdentity id, IngestStats tally, List<Refused> refused) {
            Map<ByteString, List<Span>> phasesByParent = phasesByParent(rs);
            Set<ByteString> refusedSteps = new HashSet<>();
            Map<Span, List<Integer>> badEvents = new IdentityHashMap<>(); // two equal spans are still two spans
            String inst = id.instanceId();
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span span : ss.getSpansList()) {
                    if (span.getName().equals(StepMapper.STEP_SPAN)) {
                        List<Span> kids = phasesByParent == null ? List.of() : phasesByParent.getOrDefault(span.getSpanId(), List.of());
                        try {
                            count(tally, StepMapper.formA(FragmentSpan.of(span), FragmentSpan.of(kids), id));
                        } catch (Rejection r) {
                            refusedSteps.add(span.getSpanId());
                            ResourceSpans whole = ResourceSpans.newBuilder().setResource(rs.getResource()).addScopeSpans(
                                    ScopeSpans.newBuilder().setScope(ss.getScope()).addSpans(span).addAllSpans(kids)).build();
                            refused.add(new Refused(r, whole.toByteArray(), inst));
                        }
                    }
                    for (int i = 0; i < span.getEventsCount(); i++) {
                        Span.Event e = span.getEvents(i);
                        if (!e.getName().equals(StepMapper.BATCH_SUMMARY)) {
                            continue;
                        }
                        try {
                            count(tally, StepMapper.formB(e, id).build());
                        } catch (Rejection r) {
                            badEvents.computeIfAbsent(span, k -> new ArrayList<>()).add(i);
                            refused.add(new Refused(r, e.toByteArray(), inst));
                        }
                    }
                }
            }
            if (refusedSteps.isEmpty() && badEvents.isEmpty()) {
                result = rs;
                return;
            }
            ResourceSpans.Builder b = rs.toBuilder().clearScopeSpans();
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                ScopeSpans.Builder sb = ss.toBuilder().clearSpans();
                for (Span span : ss.getSpansList()) {
                    if (refusedSteps.contains(span.getSpanId())
                            || (StepMapper.isPhase(span.getName()) && refusedSteps.contains(span.getParentSpanId()))) {
                        refusedSpans++;
                        continue;
                    }
                    List<Integer> bad = badEvents.get(span);
                    if (bad == null) {
                        sb.addSpans(span);
                        continue;
                    }
                    trimmedSpans++;
                    Span.Builder trimmed = span.toBuilder().clearEvents();
                    for (int i = 0; i < span.getEventsCount(); i++) {
                        if (!bad.contains(i)) {
                            trimmed.addEvents(span.getEvents(i));
                        }
                    }
                    sb.addSpans(trimmed);
                }
                if (sb.getSpansCount() > 0) {
                    b.addScopeSpans(sb);
                }
            }
            result = b.getScopeSpansCount() > 0 ? b.build() : null;
        }

        /** Phase spans by parent span id, only when the resource holds a step span (the usual form B export has none). */
        private static Map<ByteString, List<Span>> phasesByParent(ResourceSpans rs) {
            Map<ByteString, List<Span>> out = null;
            boolean anyStep = false;
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span span : ss.getSpansList()) {
                    anyStep |= span.getName().equals(StepMapper.STEP_SPAN);
                }
            }
            if (!anyStep) {
                return null;
            }
            out = new HashMap<>();
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span span : ss.getSpansList()) {
                    if (StepMapper.isPhase(span.getName())) {
                        out.computeIfAbsent(span.getParentSpanId(), k -> new ArrayList<>()).add(span);
                    }
                }
            }
            return out;
        }

        private static void count(IngestStats tally, StepRecord r) {
            if (tally != null) {
                tally.step(r);
            }
        }
    }
}
