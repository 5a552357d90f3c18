package io.stepline.ingest.topology;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.Stores;

import io.stepline.events.AssemblerHeldSpans;
import io.stepline.events.AssemblerHeldSummary;
import io.stepline.events.AssemblerSeenSteps;
import io.stepline.events.AssemblerStepStart;
import io.stepline.schemas.EventSerdes;

/**
 * The OTLP step assembler's state: one typed table per kind of thing it holds. In the topology
 * each is its own store, changelogged to {@code <application id>-<store name>-changelog}; values
 * are Avro records through the schema history ({@code EventSerdes.ASSEMBLER_*}), so a state
 * schema can evolve like a topic's. Keys start with the instance id and a '|'.
 */
public final class AssemblerState {
    /** Form A steps waiting for their phase spans, by {@code instance|span id}. */
    public static final String HELD_STEPS_STORE = "ingest-held-steps";
    /** Phase spans waiting for their step, by {@code instance|parent span id}. */
    public static final String ORPHAN_PHASES_STORE = "ingest-orphan-phases";
    /** The last form B step of a span, waiting for its successor's start, by {@code instance|step id}. */
    public static final String HELD_SUMMARIES_STORE = "ingest-held-summaries";
    /** Form B step starts waiting for their predecessor, by {@code instance|step id}. */
    public static final String STEP_STARTS_STORE = "ingest-step-starts";
    /** The most phase spans a step of the instance left with, by instance. */
    public static final String PHASES_SENT_STORE = "ingest-phases-sent";
    /** The step ids an instance sent, by instance. */
    public static final String SEEN_STEPS_STORE = "ingest-seen-steps";
    /** Steps waiting for the steps before them ({@link StepOrder}), by {@code instance|step id} (zero-padded). */
    public static final String ORDER_HELD_STORE = "ingest-order-held";
    /** The last step each instance released in order, and whether its successor is to come ({@link StepOrder}), by instance. */
    public static final String ORDER_CURSOR_STORE = "ingest-order-cursor";
    /** Every store of the assembler, for the processor to be connected to. */
    public static final List<String> STORES = List.of(HELD_STEPS_STORE, ORPHAN_PHASES_STORE, HELD_SUMMARIES_STORE, STEP_STARTS_STORE,
            PHASES_SENT_STORE, SEEN_STEPS_STORE, ORDER_HELD_STORE, ORDER_CURSOR_STORE);

    final StateTable<AssemblerHeldSpans> heldSteps;
    final StateTable<AssemblerHeldSpans> orphanPhases;
    final StateTable<AssemblerHeldSummary> heldSummaries;
    final StateTable<AssemblerStepStart> stepStarts;
    final StateTable<Integer> phasesSent;
    final StateTable<AssemblerSeenSteps> seenSteps;
    final StateTable<AssemblerHeldSummary> orderHeld;
    final StateTable<Long> orderCursor;
    /** {@link StepOrder}'s cursors as last read or moved; written to {@link #orderCursor} after each message. */
    final Map<String, StepOrder.Cursor> orderCursors = new HashMap<>();
    /**
     * Per instance, when (the assembler's clock) its progress last moved, for the liveness wait of
     * {@link StepAssembler#expire}, and whether it may have anything waiting. Not in a store: a wall
     * time means nothing to the next run of the task, which starts every instance's idle wait afresh.
     */
    private final Map<String, InstanceWait> waits = new HashMap<>();

    /** What {@link #waits} holds of one instance. */
    static final class InstanceWait {
        long progressedAtMs;
        /** True until a look at the instance's waiting state found nothing (so true after a restart). */
        boolean mayHold = true;

        InstanceWait(long nowMs) {
            this.progressedAtMs = nowMs;
        }
    }

    private AssemblerState(StateTable<AssemblerHeldSpans> heldSteps, StateTable<AssemblerHeldSpans> orphanPhases,
                           StateTable<AssemblerHeldSummary> heldSummaries, StateTable<AssemblerStepStart> stepStarts,
                           StateTable<Integer> phasesSent, StateTable<AssemblerSeenSteps> seenSteps,
                           StateTable<AssemblerHeldSummary> orderHeld, StateTable<Long> orderCursor) {
        this.heldSteps = heldSteps;
        this.orphanPhases = orphanPhases;
        this.heldSummaries = heldSummaries;
        this.stepStarts = stepStarts;
        this.phasesSent = phasesSent;
        this.seenSteps = seenSteps;
        this.orderHeld = orderHeld;
        this.orderCursor = orderCursor;
    }

    /** The instance's {@link InstanceWait}, first seen now when it has none (a new instance, or the first look since a restart). */
    InstanceWait waitOf(String inst, long nowMs) {
        return waits.computeIfAbsent(inst, k -> new InstanceWait(nowMs));
    }

    /** State in sorted maps, for assembling in-process (the evaluation harness) and for tests. */
    public static AssemblerState inMemory() {
        return new AssemblerState(StateTable.inMemory(), StateTable.inMemory(), StateTable.inMemory(), StateTable.inMemory(),
                StateTable.inMemory(), StateTable.inMemory(), StateTable.inMemory(), StateTable.inMemory());
    }

    /**
     * The same tables as a task restarted on them sees them (a restore from the changelogs): what is kept only in
     * memory, the idle waits and {@link StepOrder}'s cursors as last read, is gone. For tests of what survives a restart.
     */
    public AssemblerState reopened() {
        return new AssemblerState(heldSteps, orphanPhases, heldSummaries, stepStarts, phasesSent, seenSteps, orderHeld, orderCursor);
    }

    /**
     * Every entry of every table as {@code "<store> <key>"} and its value, by store, then key: what
     * tests compare after feeding the same input two ways, or check is bounded.
     */
    public List<Map.Entry<String, Object>> entries() {
        List<Map.Entry<String, Object>> out = new ArrayList<>();
        List<StateTable<?>> tables = List.of(heldSteps, orphanPhases, heldSummaries, stepStarts, phasesSent, seenSteps, orderHeld, orderCursor);
        for (int i = 0; i < tables.size(); i++) {
            for (Map.Entry<String, ?> e : tables.get(i).withPrefix("")) {
                out.add(Map.entry(STORES.get(i) + " " + e.getKey(), e.getValue()));
            }
        }
        return out;
    }

    /** The state in the stores {@link #addStores} added, as a processor connected to them sees it. */
    static AssemblerState of(ProcessorContext<?, ?> ctx) {
        return new AssemblerState(new StoreTable<>(ctx.getStateStore(HELD_STEPS_STORE)), new StoreTable<>(ctx.getStateStore(ORPHAN_PHASES_STORE)),
                new StoreTable<>(ctx.getStateStore(HELD_SUMMARIES_STORE)), new StoreTable<>(ctx.getStateStore(STEP_STARTS_STORE)),
                new StoreTable<>(ctx.getStateStore(PHASES_SENT_STORE)), new StoreTable<>(ctx.getStateStore(SEEN_STEPS_STORE)),
                new StoreTable<>(ctx.getStateStore(ORDER_HELD_STORE)), new StoreTable<>(ctx.getStateStore(ORDER_CURSOR_STORE)));
    }

    /** Adds the assembler's stores (in memory, cached, changelogged) to a topology. */
    static void addStores(StreamsBuilder b) {
        add(b, HELD_STEPS_STORE, EventSerdes.ASSEMBLER_HELD_SPANS);
        add(b, ORPHAN_PHASES_STORE, EventSerdes.ASSEMBLER_HELD_SPANS);
        add(b, HELD_SUMMARIES_STORE, EventSerdes.ASSEMBLER_HELD_SUMMARY);
        add(b, STEP_STARTS_STORE, EventSerdes.ASSEMBLER_STEP_START);
        add(b, PHASES_SENT_STORE, Serdes.Integer());
        add(b, SEEN_STEPS_STORE, EventSerdes.ASSEMBLER_SEEN_STEPS);
        add(b, ORDER_HELD_STORE, EventSerdes.ASSEMBLER_HELD_SUMMARY);
        add(b, ORDER_CURSOR_STORE, Serdes.Long());
    }

    private static <V> void add(StreamsBuilder b, String name, Serde<V> values) {
        b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), values).withCachingEnabled());
    }
}
