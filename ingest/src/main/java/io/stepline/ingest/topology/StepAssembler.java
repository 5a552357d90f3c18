package io.stepline.ingest.topology;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.FragmentSpan;
import io.stepline.ingest.otlp.InstanceIdentity;
import io.stepline.ingest.otlp.RequestMapper;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.Serdes;

/**
 * Turns one instance's spans into step and request records, with the state that needs:
 * form A step spans wait (up to the reorder window) for phase spans that arrive in later
 * messages, and phase spans that come before their step wait for it; form B batch summaries wait
 * for the instance's next step to learn their latency. Step ids must move forward per instance.
 * All state lives in a {@link State} so the Kafka Streams processor can back it by a changelogged
 * store.
 */
public final class StepAssembler {
    /** How long a step waits for its phase spans, and a form B summary for its successor. */
    public static final long DEFAULT_REORDER_WINDOW_MS = 2_000;
    /** Duplicate detection remembers this many recent step ids per instance. */
    static final int RECENT_STEPS = 4096;
    /** A step this far behind the highest seen is not reordering but a broken producer. */
    static final long MAX_REORDER_STEPS = 100_000;
    private static final HexFormat HEX = HexFormat.of();

    /** Key-value state of the assembler. */
    public interface State {
        byte[] get(String key);

        void put(String key, byte[] value);

        void delete(String key);

        /** Every entry whose key starts with {@code prefix}. */
        List<Map.Entry<String, byte[]>> withPrefix(String prefix);

        /** State in a sorted map, for assembling in-process (the evaluation harness) and for tests. */
        static State inMemory() {
            java.util.TreeMap<String, byte[]> store = new java.util.TreeMap<>();
            return new State() {
                @Override
                public byte[] get(String key) {
                    return store.get(key);
                }

                @Override
                public void put(String key, byte[] value) {
                    store.put(key, value);
                }

                @Override
                public void delete(String key) {
                    store.remove(key);
                }

                @Override
                public List<Map.Entry<String, byte[]>> withPrefix(String prefix) {
                    // copies: the caller may delete while it walks them
                    List<Map.Entry<String, byte[]>> out = new ArrayList<>();
                    store.subMap(prefix, prefix + Character.MAX_VALUE).forEach((k, v) -> out.add(Map.entry(k, v)));
                    return out;
                }
            };
        }
    }

    /** Where results go. */
    public interface Output {
        void step(StepRecord step);

        void request(RequestEvent event);

        void reject(Rejection why, byte[] payload);
    }

    private final long windowMs;

    public StepAssembler(long windowMs) {
        if (windowMs < 0) {
            throw new IllegalArgumentException("reorder window must be >= 0");
        }
        this.windowMs = windowMs;
    }

    public void accept(ResourceSpans rs, long nowMs, State state, Output out) {
        accept(SpanFragment.of(rs), nowMs, state, out);
    }

    public void accept(SpanFragment fragment, long nowMs, State state, Output out) {
        InstanceIdentity id;
        try {
            id = fragment.identity();
        } catch (Rejection r) {
            out.reject(r, fragment.resourceSpans().toByteArray());
            return;
        }
        String inst = id.instanceId();
        // in order of first arrival, so that steps completed by phases of one message leave in message order
        Map<Object, List<FragmentSpan>> childrenByParent = new LinkedHashMap<>();
        List<FragmentSpan> steps = new ArrayList<>();
        SeenSteps seen = new SeenSteps(inst, state);
        for (FragmentSpan fs : fragment.spans()) {
            if (fs.kind() == FragmentSpan.Kind.STEP) {
                steps.add(fs);
            } else if (fs.kind() == FragmentSpan.Kind.PHASE) {
                childrenByParent.computeIfAbsent(fs.parentKey(), k -> new ArrayList<>()).add(fs);
            }
            if (!fs.isDecoded()) {
                continue; // read from bytes: no events, not an llm_request
            }
            Span s = fs.span();
            List<Rejection> bad = new ArrayList<>();
            for (RequestEvent e : RequestMapper.fromSpan(s, id, bad)) {
                out.request(e);
            }
            for (Rejection r : bad) {
                out.reject(r, s.toByteArray());
            }
            for (Span.Event e : s.getEventsList()) {
                if (e.getName().equals(StepMapper.BATCH_SUMMARY)) {
                    formB(e, id, seen, nowMs, state, out);
                }
            }
        }
        // the instance's waiting orphan phases, looked up once per message rather than once per step
        Set<String> orphanKeys = new HashSet<>();
        if (!steps.isEmpty()) {
            state.withPrefix("o|" + inst + "|").forEach(e -> orphanKeys.add(e.getKey()));
        }
        for (FragmentSpan step : steps) {
            List<FragmentSpan> kids = childrenByParent.remove(step.idKey());
            formA(step, kids == null ? new ArrayList<>() : kids, id, seen, orphanKeys, fragment.resource(), nowMs, state, out);
        }
        seen.save();
        // phase spans whose step was not in this message: attach to a pending step, or wait for it
        for (List<FragmentSpan> phases : childrenByParent.values()) {
            List<Span> spans = FragmentSpan.spans(phases);
            String parentHex = HEX.formatHex(spans.get(0).getParentSpanId().toByteArray());
            String pkey = "p|" + inst + "|" + parentHex;
            byte[] pending = state.get(pkey);
            if (pending != null) {
                ResourceSpans held = parse(pending);
                ResourceSpans.Builder b = held.toBuilder();
                b.getScopeSpansBuilder(0).addAllSpans(spans);
                ResourceSpans merged = b.build();
                List<FragmentSpan> mergedPhases = FragmentSpan.of(merged.getScopeSpans(0).getSpansList());
                mergedPhases = mergedPhases.subList(1, mergedPhases.size());
                if (complete(mergedPhases, id, phasesSent(inst, state))) {
                    recordPhases(inst, state, mergedPhases.size());
                    state.delete(pkey);
                    emitHeld(merged, id, out);
                } else {
                    state.put(pkey, withTime(arrival(pending), merged));
                }
            } else {
                String okey = "o|" + inst + "|" + parentHex;
                byte[] orphans = state.get(okey);
                ResourceSpans.Builder b = orphans == null
                        ? ResourceSpans.newBuilder().setResource(fragment.resource()).addScopeSpans(ScopeSpans.newBuilder())
                        : parse(orphans).toBuilder();
                b.getScopeSpansBuilder(0).addAllSpans(spans);
                state.put(okey, withTime(orphans == null ? nowMs : arrival(orphans), b.build()));
            }
        }
    }

    private void formA(FragmentSpan step, List<FragmentSpan> kids, InstanceIdentity id, SeenSteps seen, Set<String> orphanKeys,
                       Resource resource, long nowMs, State state, Output out) {
        String inst = id.instanceId();
        String spanHex = step.spanIdHex();
        String okey = orphanKeys.isEmpty() ? null : "o|" + inst + "|" + spanHex;
        if (okey != null && orphanKeys.remove(okey)) {
            byte[] orphans = state.get(okey);
            kids.addAll(FragmentSpan.of(parse(orphans).getScopeSpans(0).getSpansList()));
            state.delete(okey);
        }
        StepRecord record;
        try {
            record = StepMapper.formA(step, kids, id);
            seen.check(record.getStepId());
        } catch (Rejection r) {
            out.reject(r, step.span().toByteArray());
            return;
        }
        if (complete(kids, id, phasesSent(inst, state))) {
            recordPhases(inst, state, kids.size());
            out.step(record);
        } else {
            ResourceSpans held = ResourceSpans.newBuilder().setResource(resource)
                    .addScopeSpans(ScopeSpans.newBuilder().addSpans(step.span()).addAllSpans(FragmentSpan.spans(kids))).build();
            state.put("p|" + inst + "|" + spanHex, withTime(nowMs, held));
        }
    }

    private void formB(Span.Event e, InstanceIdentity id, SeenSteps seen, long nowMs, State state, Output out) {
        StepRecord.Builder b;
        try {
            b = StepMapper.formB(e, id);
            seen.check(b.getStepId());
        } catch (Rejection r) {
            out.reject(r, e.toByteArray());
            return;
        }
        if (b.getLatencySource() == LatencySource.EXPLICIT) {
            out.step(b.build());
            return;
        }
        // The fork closes its span every 100 steps and exports spans late and in any order, so a step's
        // successor may come before it, in the same span, or a whole rotation later: every summary
        // waits under its own step id until both neighbours are settled or it expires.
        String inst = id.instanceId();
        StepRecord self = b.build();
        long k = self.getStepId();
        boolean selfDone = false;
        byte[] next = state.get(summaryKey(inst, k + 1));
        if (next != null) {
            out.step(withSuccessor(self, Serdes.STEP.decode(body(next))));
            selfDone = true;
        }
        String prevKey = summaryKey(inst, k - 1);
        byte[] prev = state.get(prevKey);
        if (prev != null && !emitted(prev)) {
            out.step(withSuccessor(Serdes.STEP.decode(body(prev)), self));
            state.put(prevKey, summary(arrival(prev), true, body(prev)));
        }
        state.put(summaryKey(inst, k), summary(nowMs, selfDone, Serdes.STEP.encode(self)));
    }

    /** Pending form B summaries: by instance and zero-padded step id, so a prefix scan walks them in step order. */
    static String summaryKey(String inst, long stepId) {
        return String.format(java.util.Locale.ROOT, "b|%s|%019d", inst, stepId);
    }

    /** [arrival ms][emitted flag][step record]. */
    private static byte[] summary(long ms, boolean emitted, byte[] record) {
        return ByteBuffer.allocate(9 + record.length).putLong(ms).put((byte) (emitted ? 1 : 0)).put(record).array();
    }

    private static boolean emitted(byte[] v) {
        return v[8] != 0;
    }

    private static byte[] body(byte[] v) {
        byte[] out = new byte[v.length - 9];
        System.arraycopy(v, 9, out, 0, out.length);
        return out;
    }

    /** The latency of {@code prev} is the interval to the start of {@code next}, its consecutive successor. */
    private static StepRecord withSuccessor(StepRecord prev, StepRecord next) {
        // the monotonic step.ts_start_ns of both when the producer sends it; else the events' wall-clock times
        long latency = next.getTsStartNs() != null && prev.getTsStartNs() != null
                ? next.getTsStartNs() - prev.getTsStartNs() : next.getStartUnixNano() - prev.getStartUnixNano();
        latency = Math.max(0, latency);
        return StepRecord.newBuilder(prev).setLatencyNs(latency).setEndUnixNano(prev.getStartUnixNano() + latency)
                .setLatencySource(LatencySource.NEXT_STEP_INTERVAL).build();
    }

    /**
     * A form B step whose successor was not traced (or never came): step.duration_us times only
     * schedule(), so the step has no latency and is not judged; it is still published, counted.
     */
    static StepRecord withoutLatency(StepRecord prev) {
        List<String> degraded = new ArrayList<>(prev.getDegraded());
        degraded.add(StepMapper.NO_SUCCESSOR);
        return StepRecord.newBuilder(prev).setLatencyNs(0).setEndUnixNano(prev.getStartUnixNano())
                .setLatencySource(LatencySource.NONE).setDegraded(degraded).build();
    }

    /**
     * Messages of one instance may arrive out of order (the Collector spreads them over partitions by
     * trace id), so a step id lower than the highest seen is normal; what is refused is a step seen
     * before (a duplicate, within the last {@link #RECENT_STEPS} ids) and an id so far behind the
     * highest that it cannot be reordering (step.id never resets, seeds/000 §C.2).
     *
     * <p>One state value per instance: [highest id][bit ring over the last RECENT_STEPS ids]. It is
     * read at the first step of a message and written back once after its last (a message carries
     * dozens of steps), so the state is current whenever Kafka Streams commits, between messages.
     */
    private static final class SeenSteps {
        private final String inst;
        private final State state;
        private ByteBuffer v;
        private boolean changed;

        SeenSteps(String inst, State state) {
            this.inst = inst;
            this.state = state;
        }

        void check(long stepId) {
            if (v == null) {
                byte[] cur = state.get(key());
                v = cur == null ? ByteBuffer.allocate(8 + RECENT_STEPS / 8).putLong(0, -1) : ByteBuffer.wrap(cur.clone());
            }
            long max = v.getLong(0);
            if (max >= 0 && stepId < max - MAX_REORDER_STEPS) {
                throw new Rejection(Rejection.STEP_ID_BACKWARDS, "step id of " + inst + " went backwards: " + stepId + " after " + max);
            }
            if (max >= 0 && stepId <= max && stepId > max - RECENT_STEPS && bit(v, stepId)) {
                throw new Rejection(Rejection.DUPLICATE_STEP, "step " + stepId + " of " + inst + " seen twice");
            }
            if (stepId > max) {
                // ids between the old and the new highest leave the ring's window of RECENT_STEPS: forget them
                long from = Math.max(max + 1, stepId - RECENT_STEPS + 1);
                for (long id = from; id <= stepId; id++) {
                    setBit(v, id, false);
                }
                v.putLong(0, stepId);
            }
            if (stepId > Math.max(max, stepId) - RECENT_STEPS) {
                setBit(v, stepId, true);
            }
            changed = true;
        }

        /** Writes the value back when a step of this message was accepted. */
        void save() {
            if (changed) {
                state.put(key(), v.array());
            }
        }

        private String key() {
            return "seen|" + inst;
        }

        private static boolean bit(ByteBuffer v, long id) {
            int slot = (int) Math.floorMod(id, (long) RECENT_STEPS);
            return (v.get(8 + slot / 8) & (1 << (slot % 8))) != 0;
        }

        private static void setBit(ByteBuffer v, long id, boolean on) {
            int slot = (int) Math.floorMod(id, (long) RECENT_STEPS);
            int i = 8 + slot / 8;
            byte b = v.get(i);
            v.put(i, (byte) (on ? b | (1 << (slot % 8)) : b & ~(1 << (slot % 8))));
        }
    }

    /** Emits what waited longer than the window: steps without all their phases, summaries without a successor. */
    public void expire(long nowMs, State state, Output out) {
        // held steps leave in step order (their keys are span ids): the detector learns in the order steps ran
        List<StepRecord> due = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : state.withPrefix("p|")) {
            if (nowMs - arrival(e.getValue()) >= windowMs) {
                state.delete(e.getKey());
                ResourceSpans held = parse(e.getValue());
                try {
                    StepRecord step = heldStep(held, InstanceIdentity.of(held.getResource()));
                    recordPhases(step.getInstanceId(), state, held.getScopeSpans(0).getSpansCount() - 1);
                    due.add(step);
                } catch (Rejection r) {
                    out.reject(r, held.toByteArray());
                }
            }
        }
        due.sort(java.util.Comparator.comparing(StepRecord::getInstanceId).thenComparingLong(StepRecord::getStepId));
        due.forEach(out::step);
        for (Map.Entry<String, byte[]> e : state.withPrefix("o|")) {
            if (nowMs - arrival(e.getValue()) >= windowMs) {
                state.delete(e.getKey());
                out.reject(new Rejection(Rejection.ORPHAN_PHASE_SPAN, "phase spans whose EngineCore::Step never arrived (" + e.getKey().substring(2) + ")"),
                        slice(e.getValue()));
            }
        }
        for (Map.Entry<String, byte[]> e : state.withPrefix("b|")) {
            if (nowMs - arrival(e.getValue()) >= windowMs) {
                state.delete(e.getKey());
                if (!emitted(e.getValue())) {
                    out.step(withoutLatency(Serdes.STEP.decode(body(e.getValue()))));
                }
            }
        }
    }

    private static void emitHeld(ResourceSpans held, InstanceIdentity id, Output out) {
        out.step(heldStep(held, id));
    }

    private static StepRecord heldStep(ResourceSpans held, InstanceIdentity id) {
        List<FragmentSpan> spans = FragmentSpan.of(held.getScopeSpans(0).getSpansList());
        return StepMapper.formA(spans.get(0), spans.subList(1, spans.size()), id);
    }

    /**
     * The most phase spans a step of this instance was emitted with, or -1 before its first step left.
     * Producers send all phases, a few (the Forward pass only) or none: once an instance's first step
     * has left (complete, or after the reorder window), its steps wait only for as many phases as it
     * ever sent, so a producer without phase spans holds back one step, not every step.
     */
    private static int phasesSent(String inst, State state) {
        byte[] v = state.get("ph|" + inst);
        return v == null ? -1 : ByteBuffer.wrap(v).getInt();
    }

    private static void recordPhases(String inst, State state, int phases) {
        if (phases > phasesSent(inst, state)) {
            state.put("ph|" + inst, ByteBuffer.allocate(4).putInt(phases).array());
        }
    }

    /** All phases there: the three EngineCore phases and four per rank (with unknown TP, any four), or as many as the instance ever sends. */
    private static boolean complete(List<FragmentSpan> phases, InstanceIdentity id, int instanceSends) {
        return (instanceSends >= 0 && phases.size() >= instanceSends) || complete(phases, id);
    }

    private static boolean complete(List<FragmentSpan> phases, InstanceIdentity id) {
        int engine = 0;
        int rank = 0;
        for (FragmentSpan phase : phases) {
            if (StepMapper.ENGINE_PHASES.contains(phase.name())) {
                engine++;
            } else {
                rank++;
            }
        }
        if (id.tp() != null) {
            return engine >= 3 && rank >= 4 * id.tp();
        }
        return engine >= 3 && rank >= 4;
    }

    private static byte[] withTime(long ms, ResourceSpans rs) {
        return withTime(ms, rs.toByteArray());
    }

    private static byte[] withTime(long ms, byte[] body) {
        return ByteBuffer.allocate(8 + body.length).putLong(ms).put(body).array();
    }

    private static long arrival(byte[] v) {
        return ByteBuffer.wrap(v).getLong();
    }

    private static byte[] slice(byte[] v) {
        byte[] out = new byte[v.length - 8];
        System.arraycopy(v, 8, out, 0, out.length);
        return out;
    }

    private static ResourceSpans parse(byte[] withTime) {
        try {
            return ResourceSpans.parseFrom(slice(withTime));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("corrupt assembler state", e);
        }
    }
}
