package io.stepline.ingest.topology;

import java.util.List;
import java.util.Map;

import io.stepline.events.AssemblerHeldSummary;
import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.validation.Rejection;

/**
 * Releases each instance's steps in step-id order. Exporters send an instance's steps in batches
 * (form A spans of one trace, the step-tracing fork's {@code scheduler_steps_<seq>} spans) that can
 * arrive out of order: an SDK's or a Collector's export delay of up to seconds is longer than a
 * batch's steps take. The detector reads an instance's steps as a sequence (a burst of slow steps,
 * an episode, the calm after it), and a batch judged after the one that followed it was judged
 * against what came later: a contention's last 50 steps came after the healthy steps that followed
 * it, were read as calm, taught the model their slowdown, and a throttle 200 steps later went
 * unflagged (validation gen.py 8607 at 6,000 steps, v-dec-7b-b: 272 of its 683 steps missed;
 * docs/BENCHMARKS.md, stop 63).
 *
 * <p>A step comes out at once when it is the next the instance can send: the one after the last
 * released, or any step when the last released has no traced successor (a form B step released
 * without latency: its successor was not traced, so the next traced id is not known). Otherwise it
 * waits, in a changelogged table, for the steps before it, and gives up on them once the
 * instance's progress has moved {@link IngestConfig#DEFAULT_STEP_ORDER_WAIT_MS} past where it stood when the step
 * arrived; a step that arrives after the steps behind it gave up on it comes out at once, late,
 * as it did before this ordering. As the assembler's other waits, this one ends by the instance's
 * own progress (the same steps in the same order whatever the poll sizes), and by the liveness and
 * end-of-input expiry. Steps in order (every producer that sends its batches in order) never wait.
 */
final class StepOrder {
    /** The held step's wait has not started: it starts at the instance's progress after the message that brought it. */
    private static final long NOT_STARTED = -1;

    /** 0: steps leave as they come. */
    private final long waitMs;

    StepOrder(long waitMs) {
        if (waitMs < 0) {
            throw new IllegalArgumentException("step order wait must be >= 0");
        }
        this.waitMs = waitMs;
    }

    /** Where one instance's released steps stand, as its cursor value in the state keeps it. */
    static final class Cursor {
        /** Nothing released yet (or nothing known: a new instance). */
        static final long NONE = Long.MIN_VALUE;
        long last = NONE;
        /** The last released step's successor was traced: the next id must come before later ones leave. */
        boolean successorComing;
        /** Steps held in the table, and the lowest of their ids. */
        int held;
        long lowestHeld = Long.MAX_VALUE;
        boolean dirty;
        /** The state holds this cursor (written while steps were held). */
        boolean stored;

        long encoded() {
            return last == NONE ? NONE : last << 1 | (successorComing ? 1 : 0);
        }
    }

    /** {@code sink} with its steps passing through this ordering first. */
    StepAssembler.Output ordering(StepAssembler.Output sink, AssemblerState state) {
        if (waitMs == 0) {
            return sink;
        }
        return new StepAssembler.Output() {
            @Override
            public void step(StepRecord step) {
                StepOrder.this.step(step, state, sink);
            }

            @Override
            public void request(RequestEvent event) {
                sink.request(event);
            }

            @Override
            public void reject(Rejection why, byte[] payload, String instanceId) {
                sink.reject(why, payload, instanceId);
            }

            @Override
            public void rejectHeld(Rejection why, byte[] payload, String instanceId) {
                sink.rejectHeld(why, payload, instanceId);
            }
        };
    }

    private void step(StepRecord s, AssemblerState state, StepAssembler.Output sink) {
        String inst = s.getInstanceId();
        Cursor c = cursor(inst, state);
        long id = s.getStepId();
        if (c.last == Cursor.NONE || id <= c.last) {
            // the instance's first step, or one the steps after it stopped waiting for: out at once
            if (c.last == Cursor.NONE) {
                advance(c, s);
            }
            sink.step(s);
            return;
        }
        // behind a lower held step even when next by itself (ids that jumped ahead): the order is kept
        if (!isNext(c, id) || c.held > 0 && id > c.lowestHeld) {
            state.orderHeld.put(key(inst, id), new AssemblerHeldSummary(NOT_STARTED, s));
            c.held++;
            c.lowestHeld = Math.min(c.lowestHeld, id);
            return;
        }
        advance(c, s);
        sink.step(s);
        if (c.held > 0 && isNext(c, c.lowestHeld)) {
            release(inst, c, state, sink, Long.MIN_VALUE, false);
        }
    }

    /**
     * After a message of the instance: held steps start their wait at its progress, and those that waited long enough
     * leave with every held step before them.
     */
    void afterMessage(String inst, long progressNs, AssemblerState state, StepAssembler.Output sink) {
        if (waitMs == 0) {
            return;
        }
        Cursor c = cursor(inst, state);
        if (c.held > 0) {
            release(inst, c, state, sink, progressNs, false);
        }
        save(inst, c, state);
    }

    /** Every held step of the instance leaves, in order (its input stopped, or ended). */
    void flush(String inst, AssemblerState state, StepAssembler.Output sink) {
        if (waitMs == 0) {
            return;
        }
        Cursor c = cursor(inst, state);
        if (c.held > 0) {
            release(inst, c, state, sink, Long.MIN_VALUE, true);
        }
        save(inst, c, state);
    }

    /** Keeps the cursors that moved outside a message of their instance (steps the expiry let go). */
    void saveAll(AssemblerState state) {
        state.orderCursors.forEach((inst, c) -> save(inst, c, state));
    }

    /** The instances with held steps, from the table: for the expiry, which looks at every instance. */
    static List<String> holding(AssemblerState state) {
        return state.orderHeld.withPrefix("").stream().map(e -> e.getValue().getStep().getInstanceId()).distinct().toList();
    }

    private void release(String inst, Cursor c, AssemblerState state, StepAssembler.Output sink, long progressNs, boolean all) {
        List<Map.Entry<String, AssemblerHeldSummary>> held = state.orderHeld.withPrefix(inst + "|");
        // a step that waited long enough leaves, and with it every held step before it: the order is kept
        int giveUpTo = all ? held.size() - 1 : -1;
        // the held summary's arrival_ms is the instance's progress (ms of its step time) when the wait began
        long progressMs = progressNs / 1_000_000L;
        for (int i = 0; i < held.size() && progressNs != Long.MIN_VALUE; i++) {
            Map.Entry<String, AssemblerHeldSummary> e = held.get(i);
            long from = e.getValue().getArrivalMs();
            if (from == NOT_STARTED) {
                e.getValue().setArrivalMs(progressMs);
                state.orderHeld.put(e.getKey(), e.getValue());
            } else if (from <= Long.MAX_VALUE - waitMs && progressMs >= from + waitMs) {
                giveUpTo = i;
            }
        }
        c.lowestHeld = Long.MAX_VALUE;
        int left = 0;
        for (int i = 0; i < held.size(); i++) {
            StepRecord s = held.get(i).getValue().getStep();
            // in id order: once one waits, every step after it waits too
            if (i <= giveUpTo || left == 0 && (s.getStepId() <= c.last || isNext(c, s.getStepId()))) {
                state.orderHeld.delete(held.get(i).getKey());
                advance(c, s);
                sink.step(s);
            } else {
                left++;
                c.lowestHeld = Math.min(c.lowestHeld, s.getStepId());
            }
        }
        c.held = left;
    }

    /**
     * Out now: the step after the last released, any step when that one has no traced successor, or a step further ahead
     * than {@link StepAssembler#RECENT_STEPS}: no late batch, but a producer whose ids jumped (its duplicate check
     * forgets the ids between as well).
     */
    private static boolean isNext(Cursor c, long id) {
        return id == c.last + 1 || !c.successorComing || id - c.last > StepAssembler.RECENT_STEPS;
    }

    private static void advance(Cursor c, StepRecord s) {
        if (c.last != Cursor.NONE && s.getStepId() <= c.last) {
            return; // a late step moves nothing back
        }
        c.last = s.getStepId();
        // a step released without latency had no traced successor (form B sampling): the next traced id is not known
        c.successorComing = s.getLatencySource() != io.stepline.events.LatencySource.NONE;
        c.dirty = true;
    }

    private static Cursor cursor(String inst, AssemblerState state) {
        return state.orderCursors.computeIfAbsent(inst, k -> {
            // the first look since the task started: what the state kept
            Cursor c = new Cursor();
            Long kept = state.orderCursor.get(inst);
            if (kept != null && kept != Cursor.NONE) {
                c.last = kept >> 1;
                c.successorComing = (kept & 1) == 1;
                c.stored = true;
            }
            for (Map.Entry<String, AssemblerHeldSummary> e : state.orderHeld.withPrefix(inst + "|")) {
                c.held++;
                c.lowestHeld = Math.min(c.lowestHeld, e.getValue().getStep().getStepId());
            }
            return c;
        });
    }

    /**
     * Stored only while steps are held: a restarted task needs the instance's place to release them in order, and without
     * held steps its next step may set the place afresh, as an instance's first does. So an instance whose batches come in
     * order adds no write to ingest's commits.
     */
    private static void save(String inst, Cursor c, AssemblerState state) {
        if (c.held > 0 && (c.dirty || !c.stored)) {
            state.orderCursor.put(inst, c.encoded());
            c.stored = true;
        } else if (c.held == 0 && c.stored) {
            state.orderCursor.delete(inst);
            c.stored = false;
        }
        c.dirty = false;
    }

    /** Held steps sort by id within the instance: the id zero-padded (ids lie in 0..StepMapper.MAX_STEP_ID, as the cursor's encoding needs). */
    private static String key(String inst, long id) {
        return inst + "|" + String.format("%020d", id);
    }
}
