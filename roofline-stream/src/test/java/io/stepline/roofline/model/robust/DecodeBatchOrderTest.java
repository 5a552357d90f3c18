package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class DecodeBatchOrderTest {
    private static final double SLACK = DecodeBatchOrder.SMALLER_BATCH_SLACK;

    /** A decode-only cell of {@code decode} requests (no context: an iteration log's) with {@code points} points and an offset. */
    private static int cell(WorkCells cells, int decode, int points, double offset) {
        int key = WorkCells.key(0, 0, decode, decode, 0);
        for (int i = 0; i < points; i++) {
            cells.add(key, i, new float[] {0, 0, decode, decode, 0, 1e7f});
        }
        cells.setOffset(cells.slot(key), offset);
        return key;
    }

    @Test
    void aCellFarUnderTheNextSmallerBatchsIsJudgedAtThatCellsOffsetLessTheSlack() {
        WorkCells cells = new WorkCells(6, 16);
        cell(cells, 52, 6, 0.166);
        int larger = cell(cells, 60, 6, -0.401);
        assertThat(cells.smallerBatchSlot(larger)).isEqualTo(cells.slot(WorkCells.key(0, 0, 50, 50, 0)));
        assertThat(DecodeBatchOrder.offset(cells, larger, cells.slot(larger))).isCloseTo(0.166 - SLACK, within(1e-12));
    }

    @Test
    void aCellWithinTheSlackOrAboveTheSmallerBatchsKeepsItsOwnOffset() {
        WorkCells cells = new WorkCells(6, 16);
        cell(cells, 52, 6, 0.2);
        int near = cell(cells, 60, 6, 0.2 - SLACK / 2);
        assertThat(DecodeBatchOrder.offset(cells, near, cells.slot(near))).isEqualTo(0.2 - SLACK / 2);
        WorkCells higher = new WorkCells(6, 16);
        cell(higher, 52, 6, 0.1);
        int above = cell(higher, 60, 6, 0.3);
        assertThat(DecodeBatchOrder.offset(higher, above, higher.slot(above))).as("no ceiling").isEqualTo(0.3);
    }

    @Test
    void onlyAKnownCellOfTheSameWorkOneDecodeBucketSmallerHoldsItUp() {
        // a smaller batch's cell with too few points for an offset of its own
        WorkCells young = new WorkCells(6, 16);
        cell(young, 52, CostFit.MIN_CELL_POINTS - 1, 0.5);
        int key = cell(young, 60, 6, -0.4);
        assertThat(DecodeBatchOrder.offset(young, key, young.slot(key))).isEqualTo(-0.4);
        // two buckets smaller (41-48 requests) is not the next smaller batch
        WorkCells apart = new WorkCells(6, 16);
        cell(apart, 44, 6, 0.5);
        key = cell(apart, 60, 6, -0.4);
        assertThat(apart.smallerBatchSlot(key)).isEqualTo(-1);
        assertThat(DecodeBatchOrder.offset(apart, key, apart.slot(key))).isEqualTo(-0.4);
        // the same batch with a prompt is other work
        WorkCells prefill = new WorkCells(6, 16);
        int withPrompt = WorkCells.key(512, 1, 52, 52, 0);
        for (int i = 0; i < 6; i++) {
            prefill.add(withPrompt, i, new float[] {512, 1, 52, 52, 0, 3e7f});
        }
        prefill.setOffset(prefill.slot(withPrompt), 0.5);
        key = cell(prefill, 60, 6, -0.4);
        assertThat(DecodeBatchOrder.offset(prefill, key, prefill.slot(key))).isEqualTo(-0.4);
        // and the smallest decode bucket has no smaller one
        assertThat(prefill.smallerBatchSlot(WorkCells.key(0, 0, 0, 0, 0))).isEqualTo(-1);
    }
}
