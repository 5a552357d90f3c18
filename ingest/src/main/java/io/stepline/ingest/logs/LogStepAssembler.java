package io.stepline.ingest.logs;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.StateTable;
import io.stepline.ingest.validation.Rejection;

/**
 * Turns the lines of vLLM server logs into step records, one log source at a time, with the
 * state that needs (in a {@link StateTable}, so the Kafka Streams processor can back it
 * by a changelogged store):
 *
 * <ul>
 * <li><b>Order.</b> Each engine's steps are published in iteration-index order, never by the lines'
 * one-second timestamps. Lines of one engine may arrive out of order (the Collector's kafka
 * exporter spreads a file's batches over partitions): a line whose predecessor has not come is
 * held, up to the reorder window or {@link #DEFAULT_MAX_HELD} lines, then the gap is given up.
 * A line behind what was published is dead-lettered (late beyond the window, or a duplicate).
 * A new engine process (a new EngineCore pid, or iteration 0 again) starts a new sequence.</li>
 * <li><b>Async scheduling.</b> Under async scheduling (on by default in recent vLLM releases) the engine
 * schedules and submits the next batch before it waits for the current one, and the printed
 * "iteration elapsed time" times only that wait: the residual of a batch submitted earlier (real
 * logs show 0.09 ms next to 22.59 ms). The step's whole latency cannot be derived from the log: it
 * also spans the CPU work between two waits (output processing of the previous batch, scheduling
 * of the next), which is not printed, and the timestamps are whole seconds. What the printed time
 * is: a lower bound of the batch's device time. When the engine is GPU-bound it is nearly all of it
 * (the real phase427 log, async, prints 34 ms decode steps and a 2.6 s stall); when the CPU was
 * slower it is a residual near zero. So a residual wait (see below) is published with
 * {@code LatencySource.NONE}, latency 0 and degraded reason {@code ASYNC_SCHEDULING}: counted,
 * never judged; every other iteration keeps its printed time, marked {@code ASYNC_SCHEDULING}
 * too, and is judged: a step slow by its lower bound was slow. The regime of an engine is known from the log's
 * start-up lines ({@code Asynchronous scheduling is enabled./disabled.}; the EngineCore's own line
 * wins over the API server's), and otherwise from the elapsed times: an iteration with tokens
 * whose time is under {@link #RESIDUAL_MAX_MS} and under a tenth of the median of the engine's last
 * {@link EngineLogState#RECENT} times cannot contain a forward pass, only the wait for a batch
 * already done, which only the batch queue (async scheduling, pipeline parallelism) produces. One
 * such iteration is enough. What was found is said once per instance at WARN.</li>
 * <li><b>Padding.</b> A {@code (dummy)} iteration is published without latency
 * ({@code DP_PADDING}): see {@link IterationStepMapper}.</li>
 * </ul>
 */
public final class LogStepAssembler {
    private static final Logger log = LoggerFactory.getLogger(LogStepAssembler.class);

    /** How many lines of one engine may wait for a missing predecessor before the gap is given up. */
    public static final int DEFAULT_MAX_HELD = 1024;
    /** An iteration with tokens that takes less than this cannot have run the model: a residual wait. */
    static final double RESIDUAL_MAX_MS = 1.0;
    /** ... and less than this fraction of the engine's median time. */
    static final double RESIDUAL_MAX_FRACTION = 0.1;
    /** Times needed before the median means anything. */
    static final int MIN_RECENT = 16;

    /** Where results go. */
    public interface Output {
        void step(StepRecord step);

        void reject(Rejection why, byte[] payload);
    }

    private final long windowMs;
    private final int maxHeld;

    public LogStepAssembler(long windowMs) {
        this(windowMs, DEFAULT_MAX_HELD);
    }

    public LogStepAssembler(long windowMs, int maxHeld) {
        if (windowMs < 0) {
            throw new IllegalArgumentException("reorder window must be >= 0");
        }
        if (maxHeld < 1) {
            throw new IllegalArgumentException("at least one line must be allowed to wait, got " + maxHeld);
        }
        this.windowMs = windowMs;
        this.maxHeld = maxHeld;
    }

    /**
     * One line of log source {@code source}.
     *
     * @param referenceUnixNanos when the line was read (dates its year: {@link LogClock})
     * @return what the line was (for counting), null for a line Stepline does not use
     */
    public VllmLogLine accept(String source, String text, long referenceUnixNanos, long nowMs, StateTable<byte[]> state, Output out) {
        VllmLogLine line = VllmLogParser.parse(text);
        if (line instanceof IterationLine it) {
            iteration(source, it, text, referenceUnixNanos, nowMs, state, out);
        } else if (line instanceof VllmLogLine.Scheduling s) {
            if (s.rank() == null) {
                SourceState src = SourceState.load(state, source);
                src.statement = s.async() ? EngineLogState.SAID_ASYNC : EngineLogState.SAID_SYNC;
                src.save(state, source);
            } else {
                String inst = LogInstances.instanceId(source, s.rank());
                EngineLogState st = load(state, inst, source, s.rank());
                if (st.pid >= 0 && st.pid != s.enginePid()) {
                    newProcess(inst, st, s.enginePid(), SourceState.load(state, source), out);
                }
                st.pid = s.enginePid();
                st.statement = s.async() ? EngineLogState.SAID_ASYNC : EngineLogState.SAID_SYNC;
                save(state, inst, st);
            }
        } else if (line instanceof VllmLogLine.TensorParallel tp) {
            SourceState src = SourceState.load(state, source);
            src.tp = tp.size();
            src.save(state, source);
        }
        return line;
    }

    private void iteration(String source, IterationLine it, String text, long referenceUnixNanos, long nowMs, StateTable<byte[]> state, Output out) {
        String inst = LogInstances.instanceId(source, it.rank());
        EngineLogState st = load(state, inst, source, it.rank());
        SourceState src = SourceState.load(state, source);
        boolean otherPid = it.enginePid() >= 0 && st.pid >= 0 && it.enginePid() != st.pid;
        if (otherPid || (it.index() == 0 && st.next > 0)) {
            newProcess(inst, st, it.enginePid(), src, out);
        }
        if (it.enginePid() >= 0) {
            st.pid = it.enginePid();
        }
        if (st.next >= 0 && it.index() < st.next) {
            out.reject(new Rejection(Rejection.STEP_ID_BACKWARDS, "Iteration(" + it.index() + ") of " + inst + " came after Iteration("
                    + (st.next - 1) + ") was published: later than the reorder window, or a duplicate line"), bytes(text));
            return;
        }
        if (st.pending.containsKey(it.index())) {
            out.reject(new Rejection(Rejection.DUPLICATE_STEP, "Iteration(" + it.index() + ") of " + inst + " seen twice"), bytes(text));
            return;
        }
        st.pending.put(it.index(), new EngineLogState.Held(nowMs, referenceUnixNanos, text));
        if (st.next < 0 && it.index() == 0) {
            st.next = 0;
        }
        release(inst, st, src, nowMs, out);
        save(state, inst, st);
    }

    /** Publishes what may go: lines whose predecessor went, and lines that waited the window for a missing one. */
    private void release(String inst, EngineLogState st, SourceState src, long nowMs, Output out) {
        while (!st.pending.isEmpty()) {
            Map.Entry<Long, EngineLogState.Held> first = st.pending.firstEntry();
            boolean inTurn = first.getKey() == st.next;
            boolean waitedEnough = nowMs - first.getValue().arrivalMs() >= windowMs || st.pending.size() > maxHeld;
            if (!inTurn && !waitedEnough) {
                return;
            }
            st.pending.pollFirstEntry();
            publish(inst, st, src, first.getValue(), out);
        }
    }

    /** A new process of the same engine: what the old one left waiting goes now, in order. */
    private void newProcess(String inst, EngineLogState st, long pid, SourceState src, Output out) {
        while (!st.pending.isEmpty()) {
            publish(inst, st, src, st.pending.pollFirstEntry().getValue(), out);
        }
        st.newProcess(pid);
    }

    private void publish(String inst, EngineLogState st, SourceState src, EngineLogState.Held held, Output out) {
        IterationLine it = (IterationLine) VllmLogParser.parse(held.text());
        boolean residual = residualWait(st, it);
        boolean saidAsync = st.statement == EngineLogState.SAID_ASYNC
                || (st.statement == EngineLogState.UNSAID && src.statement == EngineLogState.SAID_ASYNC);
        // a statement that async scheduling is off does not stop the test: pipeline parallelism uses the same batch queue
        if (!saidAsync && st.asyncEvidenceAt < 0 && residual) {
            st.asyncEvidenceAt = it.index();
            if (!st.warned) {
                st.warned = true;
                log.warn("vLLM log of instance {}: Iteration({}) took {} ms against a median of {} ms over its last {} iterations: no forward pass"
                        + " takes that long, only the wait for a batch already done, so the engine runs with async scheduling (or pipeline parallelism)"
                        + " and its printed times are waits for batches submitted earlier: lower bounds, judged as such, and residual waits"
                        + " like this one are published without latency (degraded ASYNC_SCHEDULING); start vLLM with --no-async-scheduling for whole step times.",
                        inst, it.index(), fmt(it.elapsedMs()), fmt(st.recentMedian()), st.recentCount());
            }
        }
        boolean async = saidAsync || st.asyncEvidenceAt >= 0;
        if (saidAsync && !st.warned) {
            st.warned = true;
            log.warn("vLLM log of instance {}: its start-up lines say asynchronous scheduling is enabled, so the printed iteration times are only"
                    + " the wait for a batch submitted earlier: lower bounds of the step times, judged as such (degraded ASYNC_SCHEDULING);"
                    + " residual waits near zero get no latency and are not judged. Start vLLM with --no-async-scheduling for whole step times.", inst);
        }
        if (!it.dummy() && it.scheduledTokens() > 0 && it.elapsedMs() >= RESIDUAL_MAX_MS) {
            st.addRecent(it.elapsedMs());
        }
        st.next = it.index() + 1;
        try {
            out.step(IterationStepMapper.step(it, inst, LogClock.unixNanos(it.wallClock(), held.referenceUnixNanos()), async, residual, src.tp > 0 ? src.tp : null));
        } catch (Rejection r) {
            out.reject(r, bytes(held.text()));
        }
    }

    /** The elapsed time of an iteration with work is far too short to hold a forward pass. */
    static boolean residualWait(EngineLogState st, IterationLine it) {
        if (it.dummy() || it.scheduledTokens() == 0 || st.recentCount() < MIN_RECENT || it.elapsedMs() >= RESIDUAL_MAX_MS) {
            return false;
        }
        return it.elapsedMs() < RESIDUAL_MAX_FRACTION * st.recentMedian();
    }

    /** Publishes what waited longer than the window for a predecessor that never came. */
    public void expire(long nowMs, StateTable<byte[]> state, Output out) {
        for (Map.Entry<String, byte[]> e : state.withPrefix(WAIT)) {
            if (nowMs - ByteBuffer.wrap(e.getValue()).getLong() < windowMs) {
                continue;
            }
            String inst = e.getKey().substring(WAIT.length());
            byte[] v = state.get(ENGINE + inst);
            if (v == null) {
                state.delete(e.getKey());
                continue;
            }
            EngineLogState st = EngineLogState.decode(v);
            release(inst, st, SourceState.load(state, st.source), nowMs, out);
            save(state, inst, st);
        }
    }

    private static final String ENGINE = "e|";
    private static final String WAIT = "w|";

    private static EngineLogState load(StateTable<byte[]> state, String inst, String source, int rank) {
        byte[] v = state.get(ENGINE + inst);
        return v == null ? new EngineLogState(source, rank) : EngineLogState.decode(v);
    }

    /** The engine's state, and whether (since when) a line of it waits, which {@link #expire} looks for. */
    private static void save(StateTable<byte[]> state, String inst, EngineLogState st) {
        state.put(ENGINE + inst, st.encode());
        long oldest = st.oldestArrival();
        if (oldest < 0) {
            state.delete(WAIT + inst);
        } else {
            state.put(WAIT + inst, ByteBuffer.allocate(8).putLong(oldest).array());
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String fmt(double ms) {
        return String.format(Locale.ROOT, "%.2f", ms);
    }

    /** What a log source's non-engine lines said: async scheduling for every engine, and the tensor-parallel degree. */
    private static final class SourceState {
        private static final String KEY = "s|";
        byte statement = EngineLogState.UNSAID;
        int tp;

        static SourceState load(StateTable<byte[]> state, String source) {
            SourceState s = new SourceState();
            byte[] v = state.get(KEY + source);
            if (v != null) {
                ByteBuffer b = ByteBuffer.wrap(v);
                s.statement = b.get();
                s.tp = b.getInt();
            }
            return s;
        }

        void save(StateTable<byte[]> state, String source) {
            state.put(KEY + source, ByteBuffer.allocate(5).put(statement).putInt(tp).array());
        }
    }
}
