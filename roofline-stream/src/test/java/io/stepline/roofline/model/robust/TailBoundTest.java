package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class TailBoundTest {

    @Test
    void aHeavyTailRaisesTheBoundAndTheFloorHoldsForALightOne() {
        SplittableRandom rng = new SplittableRandom(3);
        TailBound light = new TailBound(TailBound.DEFAULT_TAIL_RATE);
        TailBound heavy = new TailBound(TailBound.DEFAULT_TAIL_RATE);
        for (int i = 0; i < 20_000; i++) {
            light.observe(rng.nextGaussian() * 0.02);
            // one step in a hundred runs 20-40% slow: what an unreported prefix-cache miss does
            heavy.observe(rng.nextGaussian() * 0.02 + (rng.nextDouble() < 0.01 ? Math.log(1.2 + 0.2 * rng.nextDouble()) : 0));
        }
        assertThat(light.bound(1.25)).isEqualTo(1.25);
        assertThat(heavy.bound(1.25)).isBetween(1.38, 1.45);
    }

    @Test
    void slowdownsOfOneAndAHalfAndMoreAreNotTail() {
        TailBound t = new TailBound(TailBound.DEFAULT_TAIL_RATE);
        for (int i = 0; i < 10_000; i++) {
            t.observe(i % 10 == 0 ? Math.log(2.0) : 0);
        }
        assertThat(t.bound(1.25)).isEqualTo(1.25);
    }
}
