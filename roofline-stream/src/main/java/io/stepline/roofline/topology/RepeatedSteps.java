package io.stepline.roofline.topology;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The steps a task judged lately, per instance, to tell a step record committed twice from a new step.
 * Exactly-once holds on the embedded broker; an external single-node Kafka 4.3.1 broker restarted under
 * load can commit the records of an aborted ingest transaction along with their retry (KAFKA-20734), and
 * a step judged twice moves its instance's model, so every later verdict of it would differ from a clean
 * run's. A repeat is a record with the step id and the start time of one of the instance's last
 * {@link #DEFAULT_WINDOW} steps: a restarted engine counts its steps from 0 again, at other times.
 *
 * <p>Held in memory only, and started afresh with the task (a restored task has rolled back what it
 * judged after its last commit, so what it remembered of those steps must go too): a repeat that straddles
 * a restart of the detector is judged twice.
 */
final class RepeatedSteps {
    /** Steps remembered per instance: the copies of an aborted transaction's steps come within a few of the originals. */
    static final int DEFAULT_WINDOW = 1_024;

    private final int window;
    private final Map<String, Ring> rings = new HashMap<>();

    private static final class Ring {
        final long[] ids;
        final long[] starts;

        Ring(int window) {
            ids = new long[window];
            starts = new long[window];
            Arrays.fill(ids, Long.MIN_VALUE);
        }
    }

    RepeatedSteps() {
        this(DEFAULT_WINDOW);
    }

    RepeatedSteps(int window) {
        if (window < 1) {
            throw new IllegalArgumentException("window must be >= 1, got " + window);
        }
        this.window = window;
    }

    /** Whether this step was seen already (and it is remembered now if not). */
    boolean repeated(String instance, long stepId, long startUnixNano) {
        Ring r = rings.computeIfAbsent(instance, k -> new Ring(window));
        int slot = (int) Math.floorMod(stepId, (long) window);
        if (r.ids[slot] == stepId && r.starts[slot] == startUnixNano) {
            return true;
        }
        r.ids[slot] = stepId;
        r.starts[slot] = startUnixNano;
        return false;
    }

    /** Forgets every step (a task (re)initialised). */
    void clear() {
        rings.clear();
    }
}
