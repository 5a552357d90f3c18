package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeavierWorkTest {

    /** Adds {@code latencies.length} decode-only points of one work to its cell. */
    private static void decode(WorkCells cells, float reqs, float context, float... latencies) {
        for (float latency : latencies) {
            cells.add(WorkCells.key(0, 0, reqs, reqs, context), 1, new float[] {0, 0, reqs, reqs, context, latency});
        }
    }

    @Test
    void theCheapestCellOfHeavierDecodeWorkIsTheCeiling() {
        WorkCells cells = new WorkCells(6, 16);
        decode(cells, 28, 57_600, 34e6f, 35e6f, 36e6f);
        decode(cells, 40, 57_600, 40e6f, 41e6f, 42e6f);
        assertThat(HeavierWork.ceiling(cells, 23, 23, 40_000)).as("the cheaper of the two heavier cells, its median").isEqualTo(35e6);
        assertThat(HeavierWork.ceiling(cells, 30, 30, 40_000)).as("more requests than the first cell's").isEqualTo(41e6);
        assertThat(HeavierWork.ceiling(cells, 23, 23, 60_000)).as("more context than any cell's").isNaN();
    }

    @Test
    void oneFastPointIsNoCeilingNorIsPrefillWork() {
        WorkCells cells = new WorkCells(6, 16);
        decode(cells, 28, 57_600, 1e6f, 35e6f);
        assertThat(HeavierWork.ceiling(cells, 23, 23, 40_000)).as("two points: fewer than a cell's offset needs").isNaN();
        decode(cells, 28, 57_600, 36e6f);
        assertThat(HeavierWork.ceiling(cells, 23, 23, 40_000)).as("the median of three, not the fast one").isEqualTo(35e6);
        WorkCells prefill = new WorkCells(6, 16);
        for (int i = 0; i < 3; i++) {
            prefill.add(WorkCells.key(512, 1, 28, 28, 57_600), 1, new float[] {512, 1, 28, 28, 57_600, 20e6f});
        }
        assertThat(HeavierWork.ceiling(prefill, 23, 23, 40_000)).as("a step with a prompt bounds no decode step").isNaN();
    }

    @Test
    void pointsInACellThatDoLessThanTheStepDoNotCount() {
        WorkCells cells = new WorkCells(6, 16);
        // one cell (decode bucket 17-24, context bucket 32k-64k) holding steps either side of the one judged
        decode(cells, 24, 50_000, 30e6f, 30e6f, 30e6f);
        decode(cells, 18, 35_000, 10e6f, 10e6f, 10e6f);
        assertThat(HeavierWork.ceiling(cells, 20, 20, 40_000)).as("only the three heavier points").isEqualTo(30e6);
    }
}
