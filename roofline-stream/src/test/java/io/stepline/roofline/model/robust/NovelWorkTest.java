package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class NovelWorkTest {
    private static final double CELL = Math.log(1.3);

    @Test
    void aStepFarAboveItsCellsPointsJumped() {
        NovelWork w = new NovelWork();
        assertThat(w.jumped(CELL + Math.log(1.6), CELL, true)).as("1.6x above the cell").isTrue();
        assertThat(w.jumped(CELL + Math.log(1.45), CELL, true)).as("1.45x: the spread of new work").isFalse();
        assertThat(w.jumped(CELL + Math.log(3), CELL, false)).as("not above the minimum excess").isFalse();
        assertThat(w.jumped(CELL + Math.log(3), Double.NaN, true)).as("a cell with too few points says nothing").isFalse();
        assertThat(w.jumped(Double.NEGATIVE_INFINITY, CELL, true)).as("a step of no latency").isFalse();
    }

    @Test
    void jumpsHeldForLongerThanAnyTransientSlowdownAreLearnedAgain() {
        NovelWork w = new NovelWork();
        for (int i = 0; i < NovelWork.MAX_HELD; i++) {
            assertThat(w.jumped(CELL + 1, CELL, true)).isTrue();
        }
        assertThat(w.jumped(CELL + 1, CELL, true)).as("the work's cost now").isFalse();
        assertThat(w.jumped(CELL + 1, CELL, true)).isFalse();
        assertThat(w.jumped(CELL, CELL, true)).isFalse();
        assertThat(w.jumped(CELL + 1, CELL, true)).as("a step near its cell ended the run").isTrue();
    }

    @Test
    void itsStateRoundTripsThroughTheHeader() {
        NovelWork w = new NovelWork();
        for (int i = 0; i < NovelWork.MAX_HELD - 1; i++) {
            w.jumped(CELL + 1, CELL, true);
        }
        RooflineStateHeader h = new RooflineStateHeader();
        w.saveTo(h);
        assertThat(h.getNovelHeld()).isEqualTo(NovelWork.MAX_HELD - 1);
        NovelWork restored = new NovelWork();
        restored.restore(h);
        assertThat(restored.jumped(CELL + 1, CELL, true)).isTrue();
        assertThat(restored.jumped(CELL + 1, CELL, true)).as("the held run went on where it stood").isFalse();
    }
}
