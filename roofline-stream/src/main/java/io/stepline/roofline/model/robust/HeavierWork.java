package io.stepline.roofline.model.robust;

import java.util.Arrays;

/**
 * A ceiling on a decode-only step's healthy cost read from the model's memory, not its fit: such a step costs no more
 * than one that decodes at least as many requests and tokens over at least as much KV context, since every part of a
 * decode step's cost grows with them (the weights read once per step, the CUDA-graph padding up to the next captured
 * batch size, attention over the context). Where the fit is a guess, under a KV context the training had only pinned
 * ({@link CostFit#underPinnedContext}), this still knows what the step may cost at most: a contention that began as a
 * 70B decode instance's full KV cache drained went unjudged, was learned as the new work's cost, and all 72 of its 2.2x
 * steps passed (validation-style fleet3 9137, x-dec-70b-b; docs/BENCHMARKS.md, stop 78). A decode step judged in work
 * the model has no offset for is expected to cost no more than this either, and one in a known cell twice over the fit
 * (see RobustRoofline's assess and {@code IMPLAUSIBLE_CELL_RATIO}).
 *
 * <p>Read per cell (the median of a cell's points that do at least the step's work, where at least
 * {@link CostFit#MIN_CELL_POINTS} do), the cheapest such cell giving the ceiling: one fast point is no ceiling. Steps
 * with prefill are left out: a prompt's cost also depends on the cached prefix its attention reads, which the counters
 * do not carry, so fewer prefill tokens do not mean less work.
 */
final class HeavierWork {
    private HeavierWork() {}

    /**
     * The healthy cost (ns, at level 1, as the cells keep it) of the cheapest known work at least as heavy as a
     * decode-only step of {@code decodeReqs} requests, {@code decodeTokens} tokens and {@code contextTokens} of KV
     * context; NaN when no cell holds enough such points.
     */
    static double ceiling(WorkCells cells, double decodeReqs, double decodeTokens, double contextTokens) {
        float[] pt = new float[WorkCells.POINT_WIDTH];
        double[] heavier = new double[cells.pointsPerCell()];
        double best = Double.NaN;
        for (int s = 0; s < cells.cells(); s++) {
            int n = 0;
            for (int j = 0; j < cells.count(s); j++) {
                cells.point(s, j, pt);
                if (pt[0] <= 0 && pt[2] >= decodeReqs && pt[3] >= decodeTokens && pt[4] >= contextTokens && pt[5] > 0) {
                    heavier[n++] = pt[5];
                }
            }
            if (n >= CostFit.MIN_CELL_POINTS) {
                double median = CostFit.median(Arrays.copyOf(heavier, n));
                if (!(median >= best)) {
                    best = median;
                }
            }
        }
        return best;
    }
}
