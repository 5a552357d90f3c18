package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StepWatermarkTest {
    @Test
    void stepsInOrderMoveTheMarkOneByOne() {
        StepWatermark w = new StepWatermark(10);
        assertThat(w.started()).isFalse();
        assertThat(w.add(100)).isEqualTo(100);
        assertThat(w.add(101)).isEqualTo(101);
        assertThat(w.add(102)).isEqualTo(102);
        assertThat(w.add(90)).as("before the mark: changes nothing").isEqualTo(102);
    }

    @Test
    void aStepJudgedLateHoldsTheMarkUntilItsVerdictIsRead() {
        StepWatermark w = new StepWatermark(10);
        w.add(100);
        for (long s = 102; s <= 105; s++) {
            assertThat(w.add(s)).as("101 not read yet").isEqualTo(100);
        }
        assertThat(w.add(101)).isEqualTo(105);
    }

    @Test
    void aStepThatNeverGetsAVerdictIsPassedOverAfterEnoughLaterOnes() {
        StepWatermark w = new StepWatermark(3);
        w.add(100);
        w.add(102);
        w.add(103);
        assertThat(w.add(104)).as("three verdicts past the missing 101").isEqualTo(100);
        assertThat(w.add(106)).as("a fourth: 101 gets none; 105 is missing too, with one verdict after it").isEqualTo(104);
        assertThat(w.add(105)).isEqualTo(106);
        assertThatThrownBy(() -> new StepWatermark(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
