package io.stepline.roofline.model.robust;

/**
 * A decode batch does not cost less than a smaller one of the same work, and a producer without the KV context is held
 * to that in its decode-only steps: the offset a known cell is judged with is at most {@link #SMALLER_BATCH_SLACK} (in
 * log) below that of the known cell one decode bucket smaller.
 *
 * <p>Why only there: an iteration log reports no context, so each cell's points are its steps' latencies over the batch
 * level of the time they were learned, and cells learned minutes apart carry different times' levels. When the load moves
 * back and forth between such cells, the level swings to reconcile them and leaves the others wrong: on validation-style
 * {@code faults2} 5207 the log instance's cell of 57-64 requests, last learned where the level stood at ~1.0, was judged
 * after the level had fallen to 0.6 over cells learned at another time, and expected 5.9-7.5 ms for steps of 11-12 ms
 * while one request fewer was expected at 10.9 ms: 40 healthy steps flagged at 1.5-2.1x. A producer that reports the
 * context keeps its cells apart by it, and their points need no level of their time.
 *
 * <p>Only a floor, no ceiling: held under the next larger batch's cell as well, the offsets missed more slowed steps on
 * 56 validation-style sets than they spared healthy ones (docs/BENCHMARKS.md, stop 46). Only decode-only steps: a
 * prompt's step costs what its prompt costs, and on an iteration log its cells are what reports a regression (the batch
 * level follows one in the decode steps as it follows the context); held up by the next smaller batch's prompt cell,
 * which had learned part of the regression, a 1.25x regression was reported 100-200 steps later on four of ten seeds
 * of {@code ModelsTest}'s iteration log, past the 2,000 steps issue 15 allows.
 */
final class DecodeBatchOrder {
    /**
     * How far (in log) a cell's offset may lie under that of the cell one decode bucket smaller: cells' medians of six
     * noisy points differ by a few percent, and the buckets follow CUDA-graph sizes, so the larger batch's padding costs
     * more, not less. Measured at 0, 0.05, 0.1 and 0.2 on 56 sets (docs/BENCHMARKS.md, stop 46): the tighter ones found
     * more slowed steps overall but swung single sets both ways by hundreds of steps; 0 flagged more healthy steps than
     * no floor at all.
     */
    static final double SMALLER_BATCH_SLACK = 0.1;

    private DecodeBatchOrder() {}

    /** The offset a step of {@code key} in the known cell {@code slot} is judged with. */
    static double offset(WorkCells cells, int key, int slot) {
        double own = cells.offset(slot);
        int smaller = cells.smallerBatchSlot(key);
        return CostFit.knows(cells, smaller) ? Math.max(own, cells.offset(smaller) - SMALLER_BATCH_SLACK) : own;
    }
}
