package io.stepline.roofline.model;

import java.nio.ByteBuffer;
import java.util.Map;

import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.schemas.EventSerdes;

/**
 * One instance's latency model: scores a step against what it has learned, then learns from it.
 * The state is a small header plus a ring of points; {@link #dirty()} tells which parts changed
 * since the last call so a store can persist deltas, and {@link #restore} rebuilds the detector
 * from them, giving the same verdicts as if it had never stopped.
 */
public interface LatencyDetector {
    /**
     * Of the steps seen, how many the model judged with less than its full knowledge: in work it had no offset for
     * (a wider bound), beyond every training step's work (not judged by the fit), and decode-heavy steps above the
     * bound taken as the unreported KV context's drift.
     */
    record Coverage(long extrapolatedSteps, long beyondSteps, long contextDriftSteps) {}

    /** Judges a step by its counters, then learns from it. */
    Assessment assess(StepCounters step);

    /** Judges a whole step record (offline tools and tests have those) by its counters. */
    default Assessment assess(StepRecord step) {
        return assess(EventSerdes.STEP_COUNTERS.of(step));
    }

    String kind();

    long version();

    String[] featureNames();

    /** Coefficients of the current fit, one per feature name (NaN while warming up). */
    double[] coefficients();

    double interceptNs();

    double boundRatio();

    /** Reference model for drift, or null. */
    double[] referenceCoefficients();

    double referenceInterceptNs();

    long referenceVersion();

    double driftRatio();

    long stepsSeen();

    /** What {@link Coverage} counts; null for a model that does not count it (the paper's line). */
    default Coverage coverage() {
        return null;
    }

    /**
     * A shift standing when the input ends that no report covers yet (a replay over files knows its end; a live stream
     * never asks), or null. Read only: asking changes nothing the model holds.
     */
    default Assessment.Drift standingAtEnd() {
        return null;
    }

    /**
     * Changed state since the last call: "h" for the header, "s<slot>" for ring slots. Clears the dirty set.
     * The buffers are the caller's: the model never writes into them again (the detector stores their arrays as they are).
     */
    Map<String, ByteBuffer> dirty();

    /** Rebuilds from persisted parts (as produced by {@link #dirty()}). */
    void restore(Map<String, ByteBuffer> parts);

    /** Approximate bytes of state (header plus ring). */
    long stateBytes();
}
