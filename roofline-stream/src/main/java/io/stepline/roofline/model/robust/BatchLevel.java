package io.stepline.roofline.model.robust;

import java.util.List;

/**
 * The level of a producer that does not report the KV context, as a line in the decode batch:
 * {@code u + v x}, {@code x} the decode requests in units of {@link #BATCH_UNIT}.
 *
 * <p>Why a line and not one multiplier: a decode step's cost is a part fixed by the batch (weights,
 * CUDA-graph padding) plus one attention read per request whose size is the request's context. When
 * the context is not reported, what drifts is that per-request part, so a slower context mix raises
 * the cost of a 60-request batch far more than that of a 5-request one. One multiplier learned at
 * the batch sizes of the last minute is wrong as soon as the load moves. In a prototype over the
 * validation log instance's decode-only steps (seeds 7, 11, 12, 13), clean steps' p99.9 ratio to a
 * fixed per-batch cost times the tracked level was 1.37-1.87x with one multiplier and 1.24-1.30x with
 * the line, both tracked at the same rate.
 *
 * <p>A weighted least-squares line over exponentially forgotten points: five running sums, so the
 * state is small and each step costs a few multiplications. The slope is used only once the points
 * spread over {@link #MIN_SPREAD} batch units; evaluations are held inside two standard deviations
 * of the points' batch sizes, so a batch far from what was recently seen gets the edge's level,
 * not an extrapolated line.
 */
final class BatchLevel {
    /** Decode requests per unit of {@code x} (keeps the sums well scaled). */
    static final double BATCH_UNIT = 64;
    /** Below this standard deviation of recent {@code x} (4 requests), the slope is not identifiable: 0. */
    static final double MIN_SPREAD = 4 / BATCH_UNIT;
    /**
     * Ridge on the slope, as a variance of {@code x} (8 requests' standard deviation): over a narrow
     * batch range the slope is mostly noise, and an unshrunk one predicted half the cost of a batch
     * just outside the range (validation seed 12).
     */
    static final double SLOPE_RIDGE = (8 / BATCH_UNIT) * (8 / BATCH_UNIT);
    /** A level never falls under this (a guard against a line whose held edge runs negative, not a tuning). */
    static final double MIN_LEVEL = 0.25;
    /**
     * A level never rises over this (a guard, not a tuning). It was 4, and that bit: the level scales the
     * decode part, whose attention grows with the requests' contexts, and a context mix ten times longer than
     * the one the model was fitted on is ordinary (gen.py's mean context walks between 200 and 6,000 tokens).
     * On validation noisy 6309 the log instance's level reached 4 at 100 requests and, capped there, put the
     * 20-45-request steps 1.4-1.6x under what they ran at a level of 5.5-6: 537 clean steps flagged, 34 so.
     */
    static final double MAX_LEVEL = 64;

    private double sw;
    private double sx;
    private double sxx;
    private double sy;
    private double sxy;

    /** Level 1 everywhere, as one point of full weight at {@code x = 0}: forgotten as real steps arrive. */
    BatchLevel() {
        reset();
    }

    private void reset() {
        sw = 1;
        sx = 0;
        sxx = 0;
        sy = 1;
        sxy = 0;
    }

    static double x(double decodeRequests) {
        return decodeRequests / BATCH_UNIT;
    }

    /** The level at {@code x} decode-batch units. */
    double at(double x) {
        double mx = sx / sw;
        double my = sy / sw;
        double var = sxx / sw - mx * mx;
        double level = my;
        if (var > MIN_SPREAD * MIN_SPREAD) {
            double sd = Math.sqrt(var);
            double slope = (sxy / sw - mx * my) / (var + SLOPE_RIDGE);
            double held = Math.max(mx - 2 * sd, Math.min(mx + 2 * sd, x));
            level = my + slope * (held - mx);
        }
        return Math.max(MIN_LEVEL, Math.min(MAX_LEVEL, level));
    }

    /** Learns that at {@code x} the level was {@code y}, with weight {@code alpha} (older points fade by {@code 1 - alpha}). */
    void learn(double x, double y, double alpha) {
        double keep = 1 - alpha;
        sw = keep * sw + alpha;
        sx = keep * sx + alpha * x;
        sxx = keep * sxx + alpha * x * x;
        sy = keep * sy + alpha * y;
        sxy = keep * sxy + alpha * x * y;
    }

    /** Every level multiplied by {@code r} (a sustained regression re-anchors the model). */
    void scale(double r) {
        sy *= r;
        sxy *= r;
    }

    List<Double> state() {
        return List.of(sw, sx, sxx, sy, sxy);
    }

    /** Restores {@link #state()}; an empty list (a state written before the line existed) is level 1. */
    void restore(List<Double> v) {
        if (v == null || v.size() != 5) {
            reset();
            return;
        }
        sw = v.get(0);
        sx = v.get(1);
        sxx = v.get(2);
        sy = v.get(3);
        sxy = v.get(4);
    }
}
