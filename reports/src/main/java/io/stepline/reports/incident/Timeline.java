package io.stepline.reports.incident;

import java.util.ArrayList;
import java.util.List;

/**
 * One instance's judged steps over time, for the latency-over-time chart of its incidents: a ring
 * of the newest {@link #DEFAULT_RECENT} verdicts (time, latency, expected, bound, flagged) in
 * primitive arrays, and for each incident still being written a {@link Capture} that starts with
 * the stretch before the incident and keeps what follows until {@link #DEFAULT_AFTER} judged steps
 * after its last flagged step. So a report written long after its incident (a batch run reports at
 * the end of input) still has its window, and memory stays bounded per instance.
 */
final class Timeline {
    /** Verdicts kept per instance, about 80 KB. */
    static final int DEFAULT_RECENT = 4096;
    /** Judged steps shown before an incident's first flagged step. */
    static final int DEFAULT_BEFORE = 300;
    /** Judged steps shown after an incident's last flagged step. */
    static final int DEFAULT_AFTER = 300;
    /** Points of one capture at most (an incident longer than this shows its start and the stretch before it). */
    static final int MAX_CAPTURE = 8192;

    /** One judged step as drawn. */
    record Point(long timeNs, double latencyMs, double expectedMs, double boundMs, boolean flagged) {}

    private final long[] time = new long[DEFAULT_RECENT];
    private final float[] latency = new float[DEFAULT_RECENT];
    private final float[] expected = new float[DEFAULT_RECENT];
    private final float[] bound = new float[DEFAULT_RECENT];
    private final boolean[] flagged = new boolean[DEFAULT_RECENT];
    private int next;
    private int size;
    private final List<Capture> captures = new ArrayList<>();

    /** The points of one incident's window, growing until it has its stretch after. */
    static final class Capture {
        final long startNs;
        /** The newest points before the incident (they may arrive after it opened: topics are read in any order). */
        final java.util.ArrayDeque<Point> before = new java.util.ArrayDeque<>();
        final List<Point> points = new ArrayList<>();
        long lastFlaggedNs = Long.MIN_VALUE;
        int after = -1;

        Capture(long startNs) {
            this.startNs = startNs;
        }

        boolean complete() {
            return after >= DEFAULT_AFTER || points.size() >= MAX_CAPTURE;
        }

        void offer(Point p) {
            if (p.timeNs() < startNs) {
                before.addLast(p);
                if (before.size() > DEFAULT_BEFORE * 4) {
                    // keep the newest: drop the oldest by time
                    Point oldest = before.stream().min((a, b) -> Long.compare(a.timeNs(), b.timeNs())).orElseThrow();
                    before.remove(oldest);
                }
                return;
            }
            points.add(p);
            if (after >= 0 && p.timeNs() > lastFlaggedNs) {
                after++;
            }
        }
    }

    void add(long timeNs, double latencyMs, double expectedMs, double boundMs, boolean isFlagged) {
        time[next] = timeNs;
        latency[next] = (float) latencyMs;
        expected[next] = (float) expectedMs;
        bound[next] = (float) boundMs;
        flagged[next] = isFlagged;
        next = (next + 1) % DEFAULT_RECENT;
        size = Math.min(size + 1, DEFAULT_RECENT);
        Point p = new Point(timeNs, latencyMs, expectedMs, boundMs, isFlagged);
        for (Capture c : captures) {
            if (!c.complete()) {
                c.offer(p);
            }
        }
    }

    /** Starts capturing an incident that begins at {@code startNs}: what the ring holds of its window comes first. */
    Capture open(long startNs) {
        Capture c = new Capture(startNs);
        List<Point> held = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            int k = Math.floorMod(next - 1 - i, DEFAULT_RECENT);
            held.add(new Point(time[k], latency[k], expected[k], bound[k], flagged[k]));
        }
        for (int i = held.size() - 1; i >= 0; i--) {
            c.offer(held.get(i));
        }
        captures.add(c);
        return c;
    }

    /** The incident's last flagged step is known: count the stretch after it from now on. */
    static void ended(Capture c, long lastFlaggedNs) {
        c.lastFlaggedNs = lastFlaggedNs;
        c.after = 0;
        for (Point p : c.points) {
            if (p.timeNs() > lastFlaggedNs) {
                c.after++;
            }
        }
    }

    /** The capture's points in time order (the stretch before, the incident, the stretch after), and stops feeding it. */
    List<Point> take(Capture c) {
        captures.remove(c);
        List<Point> before = new ArrayList<>(c.before);
        before.sort((a, b) -> Long.compare(a.timeNs(), b.timeNs()));
        List<Point> out = new ArrayList<>(before.subList(Math.max(0, before.size() - DEFAULT_BEFORE), before.size()));
        List<Point> rest = new ArrayList<>(c.points);
        rest.sort((a, b) -> Long.compare(a.timeNs(), b.timeNs()));
        int after = 0;
        for (Point p : rest) {
            // the ring may already have held much more than the stretch after (verdicts read ahead of the anomalies)
            if (c.after >= 0 && p.timeNs() > c.lastFlaggedNs && ++after > DEFAULT_AFTER) {
                break;
            }
            out.add(p);
        }
        return out;
    }

    /** Stops feeding a capture whose incident will not be reported (folded into another). */
    void drop(Capture c) {
        captures.remove(c);
    }

    int openCaptures() {
        return captures.size();
    }
}
