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

import io.stepline.events.AssemblerHeldSpans;
import io.stepline.events.AssemblerHeldSummary;
import io.stepline.events.AssemblerSeenSteps;
import io.stepline.events.AssemblerStepStart;
import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.FragmentSpan;
import io.stepline.ingest.otlp.InstanceIdentity;
import io.stepline.ingest.otlp.RequestMapper;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;

/**
 * Turns one instance's spans into step and request records, with the state that needs:
 * form A step spans wait (up to the reorder window) for phase spans that arrive in later
 * messages, and phase spans that come before their step wait for it; form B batch summaries wait
 * for the instance's next step to learn their latency. Step ids must move forward per instance.
 * All state lives in an {@link AssemblerState} (one typed table per kind of thing held) so the
 * Kafka Streams processor can back it by changelogged stores. Held spans stay protobuf bytes until
 * their step leaves and are parsed then, once.
 *
 * <p><b>When waiting ends.</b> A replay must give the same steps every time, so what waits for an
 * instance's later input is given up by that instance's own progress, never by how fast it is
 * read: its <em>progress</em> is the latest time of the steps it has sent (a form A step's end, a
 * form B step's start; {@code latest_unix_nano} of its seen steps). Spans held for phases (or
 * for their step) leave once the instance's steps have moved the reorder window beyond where they
 * stood when the message that brought the spans was read, checked after each of its messages; a
 * form B summary waiting for its successor leaves (without latency) once the steps have moved the
 * successor wait beyond its own start. Which messages arrive before that point is a matter of
 * input order only, so Kafka Streams' poll sizes, buffering and the wall clock change nothing
 * while the instance keeps sending. The one path that depends on pace is liveness: an instance
 * whose steps stop coming (the engine stopped, its exporter died) would keep its last held steps
 * for ever, so {@link #expire} gives them up after {@code nowMs} (the caller's clock) has run for
 * the idle wait ({@link #MIN_IDLE_WAIT_MS}, or the reorder window if longer; the successor wait
 * for form B) without the instance's progress moving. At the end of a replay the caller ends all
 * waits at once ({@code expire(Long.MAX_VALUE, ...)}).
 *
 * <p>Form B as the step-tracing fork of vLLM emits it: {@code step.BATCH_SUMMARY} events on spans
 * ({@code scheduler_steps_<seq>}) that it closes every {@code --step-tracing-closure-interval}
 * steps, so a span's events arrive together, seconds after the steps, and spans may arrive out
 * of order; steps are sampled, so {@code step.id} has gaps. A step's latency is the interval to
 * the start of step id + 1 and is never taken across a gap. Within one span the events are every
 * traced step of its window, so two events of one span that are not consecutive mean the steps
 * between were not traced: decided at once. Only a span's first and last step look outside it:
 * the last waits (up to the successor wait, far longer than the reorder window) for the first
 * step of the next span, which arrives about a rotation later; the first leaves its start time
 * for a predecessor still to come. A span's {@code scheduler.step_range_start} /
 * {@code scheduler.step_range_end} (the window the fork sampled into it) say when no such step
 * can come: a last event before the range end, a first event after the range start.
 *
 * <p>Whatever order the messages came in, each instance's steps leave in step-id order ({@link StepOrder}): a step that
 * arrived before the steps preceding it waits for them, by the same progress rule.
 */
public final class StepAssembler {
    /**
     * How far (in the instance's step time) a form A step waits for its phase spans, and phase spans
     * for their step, from where the instance's steps stood when they arrived.
     */
    public static final long DEFAULT_REORDER_WINDOW_MS = 2_000;
    /**
     * The least wall-clock time an instance's progress must stand still before what it left waiting
     * for phases is given up (liveness only). Far longer than the reorder window so that it never
     * decides for an instance that is still sending: the caller's clock counts a stalled thread as at
     * most a second per observation (RunningClock), so only an input that has stopped, not a busy
     * machine, reaches it; an SDK exporting every 5 s (OTEL_BSP_SCHEDULE_DELAY) keeps it from firing too.
     */
    public static final long MIN_IDLE_WAIT_MS = 10_000;
    /** Duplicate detection remembers this many recent step ids per instance. */
    static final int RECENT_STEPS = 4096;
    /** A step this far behind the highest seen is not reordering but a broken producer. */
    static final long MAX_REORDER_STEPS = 100_000;
    private static final HexFormat HEX = HexFormat.of();

    /** Where results go. */
    public interface Output {
        void step(StepRecord step);

        void request(RequestEvent event);

        /** A rejected input of a known instance ({@code instanceId} null when the input named none). */
        void reject(Rejection why, byte[] payload, String instanceId);

        /**
         * A rejected input that waited in the state (orphan phase spans, a held step that cannot be
         * mapped): it did not come with the message being read, so it names no origin.
         */
        default void rejectHeld(Rejection why, byte[] payload, String instanceId) {
            reject(why, payload, instanceId);
        }

        /** A rejected input that named no instance. */
        default void reject(Rejection why, byte[] payload) {
            reject(why, payload, null);
        }
    }

    private final long windowMs;
    private final long successorWaitMs;
    private final long idleWaitMs;
    private final StepOrder order;

    /**
     * Form B summaries wait {@link IngestConfig#DEFAULT_FORM_B_SUCCESSOR_WAIT_MS} for their successor, steps
     * {@link IngestConfig#DEFAULT_STEP_ORDER_WAIT_MS} for the steps before them.
     */
    public StepAssembler(long windowMs) {
        this(windowMs, IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS);
    }

    /** Steps wait {@link IngestConfig#DEFAULT_STEP_ORDER_WAIT_MS} for the steps before them. */
    public StepAssembler(long windowMs, long successorWaitMs) {
        this(windowMs, successorWaitMs, IngestConfig.DEFAULT_STEP_ORDER_WAIT_MS);
    }

    /**
     * @param windowMs        how long a form A step waits for its phase spans
     * @param successorWaitMs how long a form B summary waits for the next step (in the next rotated span)
     * @param orderWaitMs     how long a step that arrived before the steps preceding it waits for them ({@link StepOrder}; 0: steps leave as they come)
     */
    public StepAssembler(long windowMs, long successorWaitMs, long orderWaitMs) {
        if (windowMs < 0) {
            throw new IllegalArgumentException("reorder window must be >= 0");
        }
        if (successorWaitMs < 0) {
            throw new IllegalArgumentException("form B successor wait must be >= 0");
        }
        this.windowMs = windowMs;
        this.successorWaitMs = successorWaitMs;
        this.idleWaitMs = Math.max(windowMs, MIN_IDLE_WAIT_MS);
        this.order = new StepOrder(orderWaitMs);
    }

    public void accept(ResourceSpans rs, long nowMs, AssemblerState state, Output out) {
        accept(SpanFragment.of(rs), nowMs, state, out);
    }

    public void accept(SpanFragment fragment, long nowMs, AssemblerState state, Output sink) {
        Output out = order.ordering(sink, state);
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
                out.reject(r, s.toByteArray(), inst);
            }
            List<Span.Event> summaries = null;
            for (Span.Event e : s.getEventsList()) {
                if (e.getName().equals(StepMapper.BATCH_SUMMARY)) {
                    if (summaries == null) {
                        summaries = new ArrayList<>();
                    }
                    summaries.add(e);
                }
            }
            if (summaries != null) {
                formB(s, summaries, id, seen, nowMs, state, out);
            }
        }
        // the instance's waiting orphan phases, looked up once per message rather than once per step
        Set<String> orphanKeys = new HashSet<>();
        if (!steps.isEmpty()) {
            state.orphanPhases.withPrefix(inst + "|").forEach(e -> orphanKeys.add(e.getKey()));
        }
        for (FragmentSpan step : steps) {
            List<FragmentSpan> kids = childrenByParent.remove(step.idKey());
            formA(step, kids == null ? new ArrayList<>() : kids, id, seen, orphanKeys, fragment.resource(), nowMs, state, out);
        }
        boolean advanced = seen.save();
        // phase spans whose step was not in this message: attach to a pending step, or wait for it
        for (List<FragmentSpan> phases : childrenByParent.values()) {
            List<Span> spans = FragmentSpan.spans(phases);
            String key = inst + "|" + HEX.formatHex(spans.get(0).getParentSpanId().toByteArray());
            AssemblerHeldSpans pending = state.heldSteps.get(key);
            if (pending != null) {
                // the held spans stay bytes: their names say whether the phases are complete now
                addPhases(pending, spans);
                if (complete(pending.getPhaseNames(), id, phasesSent(inst, state))) {
                    recordPhases(inst, state, pending.getPhases().size());
                    state.heldSteps.delete(key);
                    out.step(heldStep(pending, id));
                } else {
                    state.heldSteps.put(key, pending);
                }
            } else {
                AssemblerHeldSpans orphans = state.orphanPhases.get(key);
                if (orphans == null) {
                    orphans = new AssemblerHeldSpans(nowMs, fragment.resource().toByteString().asReadOnlyByteBuffer(), null,
                            new ArrayList<>(), new ArrayList<>(), null);
                }
                addPhases(orphans, spans);
                state.orphanPhases.put(key, orphans);
                seen.held = true;
            }
        }
        AssemblerState.InstanceWait wait = state.waitOf(inst, nowMs);
        if (advanced) {
            wait.progressedAtMs = nowMs;
        }
        if (seen.held) {
            wait.mayHold = true;
        }
        if (wait.mayHold) {
            wait.mayHold = releaseByProgress(inst, seen.latest(), state, out);
        }
        order.afterMessage(inst, seen.latest(), state, sink);
    }

    private void formA(FragmentSpan step, List<FragmentSpan> kids, InstanceIdentity id, SeenSteps seen, Set<String> orphanKeys,
                       Resource resource, long nowMs, AssemblerState state, Output out) {
        String inst = id.instanceId();
        String key = inst + "|" + step.spanIdHex();
        if (!orphanKeys.isEmpty() && orphanKeys.remove(key)) {
            kids.addAll(FragmentSpan.of(parsePhases(state.orphanPhases.get(key))));
            state.orphanPhases.delete(key);
        }
        StepRecord record;
        try {
            record = StepMapper.formA(step, kids, id);
            seen.check(record.getStepId());
            seen.progress(record.getEndUnixNano());
        } catch (Rejection r) {
            out.reject(r, step.span().toByteArray(), inst);
            return;
        }
        if (complete(names(kids), id, phasesSent(inst, state))) {
            recordPhases(inst, state, kids.size());
            out.step(record);
        } else {
            AssemblerHeldSpans held = new AssemblerHeldSpans(nowMs, resource.toByteString().asReadOnlyByteBuffer(),
                    step.span().toByteString().asReadOnlyByteBuffer(), new ArrayList<>(), new ArrayList<>(), null);
            addPhases(held, FragmentSpan.spans(kids));
            state.heldSteps.put(key, held);
            seen.held = true;
        }
    }

    /** The form B summaries of one span: paired inside the span, its first and last step with what is held. */
    private void formB(Span span, List<Span.Event> events, InstanceIdentity id, SeenSteps seen, long nowMs, AssemblerState state, Output out) {
        String inst = id.instanceId();
        List<StepRecord> steps = new ArrayList<>(events.size());
        for (Span.Event e : events) {
            StepRecord.Builder b;
            try {
                b = StepMapper.formB(e, id);
                seen.check(b.getStepId());
                seen.progress(Math.max(b.getStartUnixNano(), b.getEndUnixNano()));
            } catch (Rejection r) {
                out.reject(r, e.toByteArray(), inst);
                continue;
            }
            if (b.getLatencySource() == LatencySource.EXPLICIT) {
                out.step(b.build());
            } else {
                steps.add(b.build());
            }
        }
        if (steps.isEmpty()) {
            return;
        }
        steps.sort((x, y) -> Long.compare(x.getStepId(), y.getStepId()));
        StepRange range = StepRange.of(span);
        StepRecord first = steps.get(0);
        String prevKey = stepKey(inst, first.getStepId() - 1);
        AssemblerHeldSummary predecessor = state.heldSummaries.get(prevKey);
        if (predecessor != null) {
            state.heldSummaries.delete(prevKey);
            out.step(interval(predecessor.getStep(), first.getTsStartNs(), first.getStartUnixNano()));
        } else if (range.startsBefore(first.getStepId())) {
            // the step before was in this span's window and not traced: no step waits for this one's start;
            // nor was the window's first step traced, so the last step of the span before waits in vain
            String before = stepKey(inst, range.start() - 1);
            AssemblerHeldSummary held = state.heldSummaries.get(before);
            if (held != null) {
                state.heldSummaries.delete(before);
                out.step(withoutLatency(held.getStep()));
            }
        } else {
            // the predecessor may still come, in a span that arrives later: leave it this step's start
            state.stepStarts.put(stepKey(inst, first.getStepId()), new AssemblerStepStart(nowMs, first.getTsStartNs(), first.getStartUnixNano()));
            seen.held = true;
        }
        for (int k = 0; k + 1 < steps.size(); k++) {
            StepRecord cur = steps.get(k);
            StepRecord next = steps.get(k + 1);
            // the span holds every traced step of its window: a gap inside it is a step that was not traced
            out.step(next.getStepId() == cur.getStepId() + 1 ? interval(cur, next.getTsStartNs(), next.getStartUnixNano()) : withoutLatency(cur));
        }
        StepRecord last = steps.get(steps.size() - 1);
        String nextKey = stepKey(inst, last.getStepId() + 1);
        AssemblerStepStart successor = state.stepStarts.get(nextKey);
        if (successor != null) {
            state.stepStarts.delete(nextKey);
            out.step(interval(last, successor.getTsStartNs(), successor.getStartUnixNano()));
        } else if (range.endsAfter(last.getStepId())) {
            out.step(withoutLatency(last)); // the next step is in this span's window and was not traced
        } else {
            state.heldSummaries.put(stepKey(inst, last.getStepId()), new AssemblerHeldSummary(nowMs, last));
            seen.held = true;
        }
    }

    /** A form B step of an instance: the key of a summary waiting for its successor, or of a start waiting for its predecessor. */
    private static String stepKey(String inst, long stepId) {
        return inst + "|" + stepId;
    }

    /** {@code prev} with its latency: the interval to the next step's start. */
    private static StepRecord interval(StepRecord prev, Long nextTsStartNs, long nextStartUnixNano) {
        // the monotonic step.ts_start_ns of both when the producer sends it; else the events' wall-clock times
        long latency = nextTsStartNs != null && prev.getTsStartNs() != null
                ? nextTsStartNs - prev.getTsStartNs() : nextStartUnixNano - prev.getStartUnixNano();
        return StepRecord.newBuilder(prev).setLatencyNs(Math.max(0, latency)).setEndUnixNano(prev.getStartUnixNano() + Math.max(0, latency))
                .setLatencySource(LatencySource.NEXT_STEP_INTERVAL).build();
    }

    /**
     * The window of steps the step-tracing fork sampled into one span ({@code scheduler.step_range_start},
     * {@code scheduler.step_range_end}); either end null when the span does not say.
     */
    record StepRange(Long start, Long end) {
        static StepRange of(Span span) {
            Long start = null;
            Long end = null;
            for (io.opentelemetry.proto.common.v1.KeyValue kv : span.getAttributesList()) {
                if (!kv.getValue().hasIntValue()) {
                    continue; // a producer of another shape: the range is a hint, never a reason to reject
                }
                if (kv.getKey().equals("scheduler.step_range_start")) {
                    start = kv.getValue().getIntValue();
                } else if (kv.getKey().equals("scheduler.step_range_end")) {
                    end = kv.getValue().getIntValue();
                }
            }
            return new StepRange(start, end);
        }

        /** True when the window starts before {@code first}: the steps from its start to {@code first - 1} were not traced. */
        boolean startsBefore(long first) {
            return start != null && start < first;
        }

        /** True when the window ends after {@code last}: step {@code last + 1} belonged to it and was not traced. */
        boolean endsAfter(long last) {
            return end != null && last < end;
        }
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
     * highest that it cannot be reordering (step.id never resets, docs/INPUT.md "Step keys").
     *
     * <p>One state value per instance ({@link AssemblerSeenSteps}: the highest id and a bit ring over
     * the last RECENT_STEPS ids), here as [highest id][ring]. It is read at the first step of a
     * message and written back once after its last (a message carries dozens of steps), so the state
     * is current whenever Kafka Streams commits, between messages. The same value keeps the
     * instance's progress (the latest step time), and the message's context: whether it left
     * anything waiting.
     */
    private static final class SeenSteps {
        private final String inst;
        private final AssemblerState state;
        private ByteBuffer v;
        private long latest;
        private boolean changed;
        private boolean advanced;
        /** Something of this message now waits in the state (held spans, a summary, a start). */
        boolean held;

        SeenSteps(String inst, AssemblerState state) {
            this.inst = inst;
            this.state = state;
        }

        private void load() {
            if (v == null) {
                AssemblerSeenSteps cur = state.seenSteps.get(inst);
                v = ByteBuffer.allocate(8 + RECENT_STEPS / 8).putLong(0, cur == null ? -1 : cur.getHighest());
                if (cur != null) {
                    v.put(8, cur.getRecent(), cur.getRecent().position(), RECENT_STEPS / 8);
                }
                latest = cur == null ? 0 : cur.getLatestUnixNano();
            }
        }

        /** The instance's progress: the latest step time it sent, this message's accepted steps included. */
        long latest() {
            load();
            return latest;
        }

        /** An accepted step's time moves the instance's progress (never back). */
        void progress(long unixNano) {
            load();
            if (unixNano > latest) {
                latest = unixNano;
                advanced = true;
            }
        }

        void check(long stepId) {
            load();
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
                // counted, not "id <= stepId": that never ends for Long.MAX_VALUE (a hostile step.id hung the thread)
                for (long k = 0, n = stepId - from + 1; k < n; k++) {
                    setBit(v, from + k, false);
                }
                v.putLong(0, stepId);
            }
            if (stepId > Math.max(max, stepId) - RECENT_STEPS) {
                setBit(v, stepId, true);
            }
            changed = true;
        }

        /** Writes the value back when a step of this message was accepted; returns whether the instance's progress moved. */
        boolean save() {
            if (changed) {
                state.seenSteps.put(inst, new AssemblerSeenSteps(v.getLong(0), ByteBuffer.wrap(v.array(), 8, RECENT_STEPS / 8).slice(), latest));
            }
            return advanced;
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

    /**
     * Gives up what an instance left waiting once its progress ({@code progressNs}) has moved far
     * enough: held spans the reorder window beyond where the instance stood when they arrived (set
     * here, after the message that brought them), form B summaries and starts the successor wait
     * beyond their own start. Runs after each message of the instance while it has anything waiting.
     *
     * @return whether anything of the instance still waits
     */
    private boolean releaseByProgress(String inst, long progressNs, AssemblerState state, Output out) {
        String prefix = inst + "|";
        long windowNs = nanos(windowMs);
        long successorNs = nanos(successorWaitMs);
        boolean waits = false;
        List<Map.Entry<String, AssemblerHeldSpans>> leaving = new ArrayList<>();
        for (Map.Entry<String, AssemblerHeldSpans> e : state.heldSteps.withPrefix(prefix)) {
            AssemblerHeldSpans held = e.getValue();
            if (held.getWaitFromUnixNano() == null) {
                held.setWaitFromUnixNano(progressNs);
                state.heldSteps.put(e.getKey(), held);
                waits = true;
            } else if (reached(progressNs, held.getWaitFromUnixNano(), windowNs)) {
                leaving.add(e);
            } else {
                waits = true;
            }
        }
        if (!leaving.isEmpty()) {
            leave(leaving, prefix, state, out);
        }
        for (Map.Entry<String, AssemblerHeldSpans> e : state.orphanPhases.withPrefix(prefix)) {
            AssemblerHeldSpans orphans = e.getValue();
            if (orphans.getWaitFromUnixNano() == null) {
                orphans.setWaitFromUnixNano(progressNs);
                state.orphanPhases.put(e.getKey(), orphans);
                waits = true;
            } else if (reached(progressNs, orphans.getWaitFromUnixNano(), windowNs)) {
                state.orphanPhases.delete(e.getKey());
                orphaned(e.getKey(), orphans, out);
            } else {
                waits = true;
            }
        }
        for (Map.Entry<String, AssemblerHeldSummary> e : state.heldSummaries.withPrefix(prefix)) {
            if (reached(progressNs, e.getValue().getStep().getStartUnixNano(), successorNs)) {
                state.heldSummaries.delete(e.getKey());
                out.step(withoutLatency(e.getValue().getStep()));
            } else {
                waits = true;
            }
        }
        for (Map.Entry<String, AssemblerStepStart> e : state.stepStarts.withPrefix(prefix)) {
            if (reached(progressNs, e.getValue().getStartUnixNano(), successorNs)) {
                state.stepStarts.delete(e.getKey()); // its predecessor was not traced, or arrives too late to pair
            } else {
                waits = true;
            }
        }
        return waits;
    }

    /** {@code progressNs} is at least {@code waitNs} past {@code fromNs} (never, where that sum is past a long). */
    private static boolean reached(long progressNs, long fromNs, long waitNs) {
        return fromNs <= Long.MAX_VALUE - waitNs && progressNs >= fromNs + waitNs;
    }

    private static long nanos(long ms) {
        return ms > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : ms * 1_000_000L;
    }

    /**
     * Liveness, the one path that depends on pace: gives up what waits for an instance whose
     * progress has not moved for the idle wait of the caller's clock (held spans: the idle wait;
     * form B summaries and starts: the successor wait). {@code nowMs} {@link Long#MAX_VALUE} ends
     * every wait: nothing more will come (the end of a replay).
     */
    public void expire(long nowMs, AssemblerState state, Output sink) {
        Output out = order.ordering(sink, state);
        boolean end = nowMs == Long.MAX_VALUE;
        List<Map.Entry<String, AssemblerHeldSpans>> leaving = new ArrayList<>();
        for (Map.Entry<String, AssemblerHeldSpans> e : state.heldSteps.withPrefix("")) {
            if (end || idle(instanceOf(e.getKey()), nowMs, idleWaitMs, state)) {
                leaving.add(e);
            }
        }
        if (!leaving.isEmpty()) {
            leave(leaving, "", state, out);
        }
        for (Map.Entry<String, AssemblerHeldSpans> e : state.orphanPhases.withPrefix("")) {
            if (end || idle(instanceOf(e.getKey()), nowMs, idleWaitMs, state)) {
                state.orphanPhases.delete(e.getKey());
                orphaned(e.getKey(), e.getValue(), out);
            }
        }
        for (Map.Entry<String, AssemblerHeldSummary> e : state.heldSummaries.withPrefix("")) {
            if (end || idle(instanceOf(e.getKey()), nowMs, successorWaitMs, state)) {
                state.heldSummaries.delete(e.getKey());
                out.step(withoutLatency(e.getValue().getStep()));
            }
        }
        for (Map.Entry<String, AssemblerStepStart> e : state.stepStarts.withPrefix("")) {
            if (end || idle(instanceOf(e.getKey()), nowMs, successorWaitMs, state)) {
                state.stepStarts.delete(e.getKey());
            }
        }
        // last: steps the waits above let go may be the ones held steps wait for
        for (String inst : StepOrder.holding(state)) {
            if (end || idle(inst, nowMs, idleWaitMs, state)) {
                order.flush(inst, state, sink);
            }
        }
        order.saveAll(state);
    }

    /** The instance's progress has stood still for {@code waitMs} of the caller's clock (since its state was loaded, after a restart). */
    private static boolean idle(String inst, long nowMs, long waitMs, AssemblerState state) {
        return nowMs - state.waitOf(inst, nowMs).progressedAtMs >= waitMs;
    }

    private static void orphaned(String key, AssemblerHeldSpans orphans, Output out) {
        out.rejectHeld(new Rejection(Rejection.ORPHAN_PHASE_SPAN, "phase spans whose EngineCore::Step never arrived (" + key + ")"),
                resourceSpans(orphans).toByteArray(), instanceOf(key));
    }

    /**
     * Emits held steps that stop waiting (deleting them), in step order, with the steps of their
     * instances (under {@code prefix}) that are complete once an instance's first step has left.
     */
    private static void leave(List<Map.Entry<String, AssemblerHeldSpans>> leaving, String prefix, AssemblerState state, Output out) {
        // steps leave in step order, not in the order of their keys (span ids): the detector reads them in this order
        List<StepRecord> due = new ArrayList<>();
        Set<String> firstLeft = new HashSet<>();
        for (Map.Entry<String, AssemblerHeldSpans> e : leaving) {
            AssemblerHeldSpans held = e.getValue();
            state.heldSteps.delete(e.getKey());
            String inst = instanceOf(e.getKey());
            InstanceIdentity id = null;
            try {
                id = InstanceIdentity.of(resourceOf(held));
                due.add(heldStep(held, id));
                if (phasesSent(inst, state) < 0) {
                    firstLeft.add(inst);
                }
                recordPhases(inst, state, held.getPhases().size());
            } catch (Rejection r) {
                out.rejectHeld(r, resourceSpans(held).toByteArray(), id == null ? null : inst);
            }
        }
        if (!firstLeft.isEmpty()) {
            // An instance's first step has just left, so its steps now wait only for as many phases as it sends:
            // the ones held since are complete, and leave now with it, in order. Left waiting for their own
            // window, they would leave after steps that arrive later and pass at once (a producer without phase
            // spans: the detector read its first seconds out of order, differently on every replay).
            for (Map.Entry<String, AssemblerHeldSpans> e : state.heldSteps.withPrefix(prefix)) {
                String inst = instanceOf(e.getKey());
                if (!firstLeft.contains(inst)) {
                    continue;
                }
                AssemblerHeldSpans held = e.getValue();
                try {
                    InstanceIdentity id = InstanceIdentity.of(resourceOf(held));
                    if (complete(held.getPhaseNames(), id, phasesSent(inst, state))) {
                        state.heldSteps.delete(e.getKey());
                        due.add(heldStep(held, id));
                    }
                } catch (Rejection r) {
                    state.heldSteps.delete(e.getKey());
                    out.rejectHeld(r, resourceSpans(held).toByteArray(), inst);
                }
            }
        }
        due.sort((x, y) -> x.getInstanceId().equals(y.getInstanceId())
                ? Long.compare(x.getStepId(), y.getStepId()) : x.getInstanceId().compareTo(y.getInstanceId()));
        due.forEach(out::step);
    }

    /** The instance of a state key ({@code instance|...}). */
    private static String instanceOf(String key) {
        return key.substring(0, key.lastIndexOf('|'));
    }

    /** A held step with its phases, parsed once: when it leaves. */
    private static StepRecord heldStep(AssemblerHeldSpans held, InstanceIdentity id) {
        return StepMapper.formA(FragmentSpan.of(parseSpan(held.getStep())), FragmentSpan.of(parsePhases(held)), id);
    }

    private static void addPhases(AssemblerHeldSpans held, List<Span> phases) {
        for (Span p : phases) {
            held.getPhases().add(p.toByteString().asReadOnlyByteBuffer());
            held.getPhaseNames().add(p.getName());
        }
    }

    private static List<String> names(List<FragmentSpan> phases) {
        List<String> out = new ArrayList<>(phases.size());
        for (FragmentSpan p : phases) {
            out.add(p.name());
        }
        return out;
    }

    private static List<Span> parsePhases(AssemblerHeldSpans held) {
        List<Span> out = new ArrayList<>(held.getPhases().size());
        for (ByteBuffer b : held.getPhases()) {
            out.add(parseSpan(b));
        }
        return out;
    }

    private static Span parseSpan(ByteBuffer b) {
        try {
            return Span.parseFrom(b.duplicate());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("corrupt assembler state", e);
        }
    }

    private static Resource resourceOf(AssemblerHeldSpans held) {
        try {
            return Resource.parseFrom(held.getResource().duplicate());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("corrupt assembler state", e);
        }
    }

    /** Held spans as the OTLP message a dead letter carries: the resource, then the step span (if any) and the phases. */
    private static ResourceSpans resourceSpans(AssemblerHeldSpans held) {
        ScopeSpans.Builder scope = ScopeSpans.newBuilder();
        if (held.getStep() != null) {
            scope.addSpans(parseSpan(held.getStep()));
        }
        scope.addAllSpans(parsePhases(held));
        return ResourceSpans.newBuilder().setResource(resourceOf(held)).addScopeSpans(scope).build();
    }

    /**
     * The most phase spans a step of this instance was emitted with, or -1 before its first step left.
     * Producers send all phases, a few (the Forward pass only) or none: once an instance's first step
     * has left (complete, or after the reorder window), its steps wait only for as many phases as it
     * ever sent, so a producer without phase spans holds back one step, not every step.
     */
    private static int phasesSent(String inst, AssemblerState state) {
        Integer v = state.phasesSent.get(inst);
        return v == null ? -1 : v;
    }

    private static void recordPhases(String inst, AssemblerState state, int phases) {
        if (phases > phasesSent(inst, state)) {
            state.phasesSent.put(inst, phases);
        }
    }

    /** All phases there: the three EngineCore phases and four per rank (with unknown TP, any four), or as many as the instance ever sends. */
    private static boolean complete(List<String> phaseNames, InstanceIdentity id, int instanceSends) {
        return (instanceSends >= 0 && phaseNames.size() >= instanceSends) || complete(phaseNames, id);
    }

    private static boolean complete(List<String> phaseNames, InstanceIdentity id) {
        int engine = 0;
        int rank = 0;
        for (String phase : phaseNames) {
            if (StepMapper.ENGINE_PHASES.contains(phase)) {
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
}
