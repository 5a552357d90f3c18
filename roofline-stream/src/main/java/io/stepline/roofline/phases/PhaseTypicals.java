package io.stepline.roofline.phases;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

import io.stepline.events.PhaseSpan;
import io.stepline.events.PhaseTypical;
import io.stepline.events.PhaseTypicalsState;
import io.stepline.schemas.EventSerdes;

/**
 * The typical duration of each phase span name on one instance: a streaming median (each
 * observation nudges the estimate up or down by a step proportional to it), so the slow steps of
 * an incident barely move it. Ranks share a phase's name and each of their spans counts.
 *
 * <p>The detector keeps one per instance, learns from a sample of the instance's steps (those
 * {@link #sampled}) in the order it judges them, and keeps it in its changelogged model store, so
 * the baseline an outlier carries ({@link #baselines}) is the same in every run and after every
 * restart: triage compares the incident's phases with it (issue 16, pace independence).
 */
public final class PhaseTypicals {
    /**
     * The steps learned from: those whose id is a multiple of this. Decoding a step's phase spans is
     * what costs (the detector judges by the counters alone), and a median of every 8th step of an
     * instance that runs hundreds a second still follows its phases within seconds.
     */
    public static final int DEFAULT_SAMPLE_EVERY_STEPS = 8;
    /** A phase name has a baseline once this many of its spans were learned from: fewer say too little of what is typical. */
    public static final int DEFAULT_MIN_SEEN = 20;
    /** The first observations of a name move its estimate by this share of it, so that it settles quickly ... */
    static final double SETTLING_RATE = 0.2;
    /** ... for this many observations; then by this smaller share, so that one slow span moves it little. */
    static final int SETTLING_OBSERVATIONS = 50;
    static final double TRACKING_RATE = 0.02;

    /** Per phase name, in name order (the order the state and the baselines are written in). */
    private final TreeMap<String, Estimate> byName = new TreeMap<>();

    private static final class Estimate {
        double typicalNs;
        long seen;

        Estimate(double typicalNs, long seen) {
            this.typicalNs = typicalNs;
            this.seen = seen;
        }
    }

    /** Whether the detector learns from the step with this id (see {@link #DEFAULT_SAMPLE_EVERY_STEPS}). */
    public static boolean sampled(long stepId) {
        return Math.floorMod(stepId, DEFAULT_SAMPLE_EVERY_STEPS) == 0;
    }

    /** Learns from one step's phase spans; whether anything changed (false for a step without phases). */
    public boolean learn(List<PhaseSpan> phases) {
        for (PhaseSpan p : phases) {
            double x = p.getDurationNs();
            Estimate e = byName.computeIfAbsent(p.getName(), k -> new Estimate(x, 0));
            e.seen++;
            double step = Math.max(1, e.typicalNs * (e.seen < SETTLING_OBSERVATIONS ? SETTLING_RATE : TRACKING_RATE));
            if (x > e.typicalNs) {
                e.typicalNs += step;
            } else if (x < e.typicalNs) {
                e.typicalNs = Math.max(0, e.typicalNs - step);
            }
        }
        return !phases.isEmpty();
    }

    /** Phase name -> typical duration (ns), in name order, for the names learned from at least {@code minSeen} spans. */
    public SortedMap<String, Double> baselines(int minSeen) {
        TreeMap<String, Double> out = new TreeMap<>();
        byName.forEach((name, e) -> {
            if (e.seen >= minSeen) {
                out.put(name, e.typicalNs);
            }
        });
        return Collections.unmodifiableSortedMap(out);
    }

    /** The state to keep in the store. */
    public byte[] encode() {
        List<PhaseTypical> phases = new ArrayList<>(byName.size());
        byName.forEach((name, e) -> phases.add(new PhaseTypical(name, e.typicalNs, e.seen)));
        return EventSerdes.PHASE_TYPICALS_STATE.encode(new PhaseTypicalsState(phases));
    }

    /** The typicals {@link #encode} kept. */
    public static PhaseTypicals decode(byte[] bytes) {
        PhaseTypicals t = new PhaseTypicals();
        for (PhaseTypical p : EventSerdes.PHASE_TYPICALS_STATE.decode(bytes).getPhases()) {
            t.byName.put(p.getName(), new Estimate(p.getTypicalNs(), p.getSeen()));
        }
        return t;
    }
}
