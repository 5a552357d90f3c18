package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class ContextDriftWitnessTest {
    private static final double PREFILL_HEAVY = 0.8;
    private static final double DECODE_HEAVY = 0.1;

    private static boolean decode(ContextDriftWitness w, long step, double ratio) {
        return w.explains(step, DECODE_HEAVY, ratio, Math.log(ratio));
    }

    @Test
    void aDecodeStepAfterAnotherRunningHighWhileTheLastPrefillStepWasCalmIsTheContextsDrift() {
        ContextDriftWitness w = new ContextDriftWitness();
        assertThat(w.explains(10, PREFILL_HEAVY, 1.05, Math.log(1.05))).isFalse();
        assertThat(decode(w, 11, 1.3)).isFalse(); // the step before ran near the model: a run has not begun
        assertThat(decode(w, 12, 1.45)).isTrue();
        // a slowdown of a fault's size is not the context's
        assertThat(decode(w, 13, 1.6)).isFalse();
    }

    @Test
    void aSlowOrOldWitnessSpeaksForNothing() {
        ContextDriftWitness none = new ContextDriftWitness();
        decode(none, 1, 1.3);
        assertThat(decode(none, 2, 1.4)).isFalse();

        ContextDriftWitness slow = new ContextDriftWitness();
        slow.explains(10, PREFILL_HEAVY, 1.5, Math.log(1.5));
        decode(slow, 11, 1.3);
        assertThat(decode(slow, 12, 1.4)).isFalse();

        ContextDriftWitness old = new ContextDriftWitness();
        old.explains(10, PREFILL_HEAVY, 1.0, 0);
        decode(old, 10 + ContextDriftWitness.WITNESS_STEPS, 1.3);
        assertThat(decode(old, 11 + ContextDriftWitness.WITNESS_STEPS, 1.4)).isFalse();
    }

    @Test
    void countsTheStepsItExplainedAndRestoresWhatItKeeps() {
        ContextDriftWitness w = new ContextDriftWitness();
        w.explains(10, PREFILL_HEAVY, 1.0, 0);
        decode(w, 11, 1.3);
        w.drifted();
        w.drifted();
        RooflineStateHeader h = new RooflineStateHeader();
        w.saveTo(h);
        ContextDriftWitness copy = new ContextDriftWitness();
        copy.restore(h);
        assertThat(copy.driftedSteps()).isEqualTo(2);
        assertThat(decode(copy, 12, 1.4)).isTrue();
        assertThat(decode(new ContextDriftWitness(), 12, 1.4)).isFalse();
    }
}
