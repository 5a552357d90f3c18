package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class EpisodeLatchTest {
    private static final double NEAR = Math.log(1.1);

    private static void calm(EpisodeLatch l, int steps) {
        for (int i = 0; i < steps; i++) {
            assertThat(l.observe(false, (i % 2 == 0 ? 1 : -1) * 0.02, NEAR)).isFalse();
        }
    }

    private static void burst(EpisodeLatch l, double ratio) {
        assertThat(l.observe(true, Math.log(ratio), NEAR)).isFalse(); // one flag is no burst
        assertThat(l.observe(true, Math.log(ratio), NEAR)).isFalse();
        assertThat(l.observe(true, Math.log(ratio), NEAR)).isTrue();
    }

    @Test
    void aJumpFromStepsNearTheModelClosesItAndARunBackNearOpensIt() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.2);
        // unflagged steps of the episode that are not near the model keep it closed
        for (int i = 0; i < 300; i++) {
            assertThat(l.observe(i % 3 == 0, Math.log(1.15), NEAR)).isTrue();
        }
        // back within NEAR, though not far enough below the episode to be a drop: a run of them opens it
        for (int i = 0; i < EpisodeLatch.EXIT_RUN - 1; i++) {
            assertThat(l.observe(false, Math.log(1.05), NEAR)).isTrue();
        }
        assertThat(l.observe(false, Math.log(1.05), NEAR)).isFalse();
    }

    @Test
    void stepsDroppingWellBelowTheEpisodeOpenItThoughTheHeldModelIsBehind() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.6);
        for (int i = 0; i < 100; i++) {
            assertThat(l.observe(i % 4 != 0, Math.log(1.6 + (i % 2) * 0.1), NEAR)).isTrue();
        }
        // the slowdown ends; the held model is 25% behind, so no step comes near it
        int closedFor = 0;
        while (l.observe(false, Math.log(1.25), NEAR)) {
            closedFor++;
        }
        assertThat(closedFor).isBetween(1, 8);
    }

    @Test
    void aBurstAfterStepsThatCreptUpIsDriftAndLeavesItOpen() {
        EpisodeLatch l = new EpisodeLatch();
        for (int i = 0; i < 50; i++) {
            l.observe(false, Math.log(1.2), Math.log(1.25)); // running high before the flags: creep
        }
        for (int i = 0; i < 6; i++) {
            assertThat(l.observe(true, Math.log(1.3), Math.log(1.25))).isFalse();
        }
    }

    @Test
    void anEpisodeLongerThanAnyTransientOpensIt() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        for (int i = 0; i < 3; i++) {
            l.observe(true, Math.log(1.6), NEAR);
        }
        int closedFor = 0;
        while (l.observe(true, Math.log(1.6), NEAR)) {
            closedFor++;
        }
        assertThat(closedFor).isEqualTo(EpisodeLatch.MAX_STEPS);
    }

    @Test
    void itsStateRoundTripsThroughTheHeader() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 20);
        for (int i = 0; i < 5; i++) {
            l.observe(true, Math.log(1.6), NEAR);
        }
        l.observe(false, Math.log(1.5), NEAR);
        RooflineStateHeader.Builder h = RooflineStateHeader.newBuilder().setStepsSeen(0).setStepsSinceRefit(0).setExtrapolatedSteps(0)
                .setBeyondSteps(0).setElevatedShare(0).setLevel(1).setDriftCurrent(java.nio.ByteBuffer.allocate(0))
                .setDriftCurrentTailMask(java.nio.ByteBuffer.allocate(0)).setDriftCurrentStartNs(0);
        l.saveTo(h);
        EpisodeLatch restored = new EpisodeLatch();
        restored.restore(h.build());
        assertThat(restored.closed()).isTrue();
        // both open on the same step of a slow fall back
        int step = 0;
        boolean open = false;
        while (!open && step < 100) {
            double r = Math.log(1.5 - 0.02 * step++);
            boolean a = l.observe(false, r, NEAR);
            boolean b = restored.observe(false, r, NEAR);
            assertThat(b).as("step %d", step).isEqualTo(a);
            open = !a;
        }
        assertThat(open).isTrue();
        assertThat(step).isGreaterThan(3);
    }
}
