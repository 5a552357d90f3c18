package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class EpisodeLatchTest {
    private static final double NEAR = Math.log(1.1);

    private static void calm(EpisodeLatch l, int steps) {
        for (int i = 0; i < steps; i++) {
            assertThat(l.observe(false, (i % 2 == 0 ? 1 : -1) * 0.02, NEAR, Double.NaN)).isFalse();
        }
    }

    private static void burst(EpisodeLatch l, double ratio) {
        assertThat(l.observe(true, Math.log(ratio), NEAR, Double.NaN)).isFalse(); // one flag is no burst
        assertThat(l.observe(true, Math.log(ratio), NEAR, Double.NaN)).isTrue(); // a second after calm steps is (CLOSE_FLAGS)
        assertThat(l.observe(true, Math.log(ratio), NEAR, Double.NaN)).isTrue();
    }

    /**
     * A throttle hardly above the bound on a producer without the KV context: flagged on its first two steps, then
     * under the bound. The latch closes on the second flag and holds through the unflagged steps that follow;
     * a single flag among calm steps (a one-step stall) does not close it.
     */
    @Test
    void twoFlagsAfterCalmStepsCloseItAndItHoldsThroughTheThrottlesStepsUnderTheBound() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 40);
        assertThat(l.observe(true, Math.log(2.5), NEAR, Double.NaN)).isFalse();
        calm(l, 4);
        assertThat(l.observe(true, Math.log(1.41), NEAR, Double.NaN)).isFalse();
        assertThat(l.observe(true, Math.log(1.41), NEAR, Double.NaN)).isTrue();
        for (double r : new double[] {1.24, 1.28, 1.25, 1.36, 1.40, 1.34, 1.26, 1.12, 1.22, 1.30}) {
            assertThat(l.observe(false, Math.log(r), NEAR, 0.1)).as("under the bound at %.2f", r).isTrue();
        }
        assertThat(l.measured()).isTrue();
        assertThat(Math.exp(l.slowdownLog())).isBetween(1.25, 1.4);
    }

    @Test
    void aJumpFromStepsNearTheModelClosesItAndARunBackNearOpensIt() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.2);
        // unflagged steps of the episode that are not near the model keep it closed
        for (int i = 0; i < 300; i++) {
            assertThat(l.observe(i % 3 == 0, Math.log(1.15), NEAR, Double.NaN)).isTrue();
        }
        // back within NEAR, though not far enough below the episode to be a drop: a run of them opens it
        for (int i = 0; i < EpisodeLatch.EXIT_RUN - 1; i++) {
            assertThat(l.observe(false, Math.log(1.05), NEAR, Double.NaN)).isTrue();
        }
        assertThat(l.observe(false, Math.log(1.05), NEAR, Double.NaN)).isFalse();
    }

    @Test
    void stepsDroppingWellBelowTheEpisodeOpenItThoughTheHeldModelIsBehind() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.6);
        for (int i = 0; i < 100; i++) {
            assertThat(l.observe(i % 4 != 0, Math.log(1.6 + (i % 2) * 0.1), NEAR, Double.NaN)).isTrue();
        }
        // the slowdown ends; the held model is 25% behind, so no step comes near it
        int closedFor = 0;
        while (l.observe(false, Math.log(1.25), NEAR, Double.NaN)) {
            closedFor++;
        }
        assertThat(closedFor).isBetween(1, 8);
    }

    /**
     * A throttle ends while the held model has fallen 1.3x behind the unreported context: the steps drop to 1.3x, some
     * of them over the bound. Those flags come from where the steps dropped to, not from calm steps, and do not close
     * the latch again; once the steps have run near the model (the level followed them), a jump closes it as before.
     */
    @Test
    void flagsRightAfterAnEpisodeEndedByItsDropDoNotCloseItAgainUntilTheStepsWereCalm() {
        EpisodeLatch l = openedByTheDropOfA175xEpisode();
        for (int i = 0; i < 200; i++) {
            assertThat(l.observe(i % 3 != 0, Math.log(1.3 + (i % 2) * 0.1), NEAR, Double.NaN)).as("step %d after the drop", i).isFalse();
        }
        // the level caught up: calm steps, then a contention
        calm(l, 60);
        burst(l, 1.8);
    }

    /** The drop was a noisy throttle's dip: flags back at the episode's slowdown close it again at once. */
    @Test
    void flagsBackAtTheEpisodesSlowdownRightAfterADropCloseItAgain() {
        EpisodeLatch l = openedByTheDropOfA175xEpisode();
        burst(l, 1.75);
    }

    /** A 1.75x episode of 600 steps after calm ones, then steps at 1.25x until the latch opens on the drop. */
    private static EpisodeLatch openedByTheDropOfA175xEpisode() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.75);
        for (int i = 0; i < 600; i++) {
            assertThat(l.observe(true, Math.log(1.75), NEAR, Double.NaN)).isTrue();
        }
        int closedFor = 0;
        while (l.observe(false, Math.log(1.25), NEAR, Double.NaN)) {
            closedFor++;
        }
        assertThat(closedFor).as("steps of the drop before it opened").isBetween(1, 8);
        return l;
    }

    /**
     * On an iteration log the decode-heavy steps carry the unreported context, which drifts while the model is held: in
     * a throttle they may fall well below the episode's slowdown while the prefill-heavy steps, whose cost is their
     * prompt's, still run at it. Those keep the latch closed; when they drop too, it opens.
     */
    @Test
    void prefillHeavyStepsStillAsSlowAsTheEpisodeKeepItClosedWhileTheDecodeHeavyOnesDrop() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.75);
        for (int i = 0; i < 100; i++) {
            assertThat(l.observe(true, Math.log(1.75), NEAR, i % 3 == 0 ? 0.8 : 0.1)).isTrue();
        }
        for (int i = 0; i < 60; i++) {
            boolean prefillHeavy = i % 3 == 0;
            assertThat(l.observe(prefillHeavy, Math.log(prefillHeavy ? 1.75 : 1.2), NEAR, prefillHeavy ? 0.8 : 0.1))
                    .as("step %d with the decode-heavy steps down", i).isTrue();
        }
        int closedFor = 0;
        for (int i = 0; l.observe(false, Math.log(1.2), NEAR, i % 3 == 0 ? 0.8 : 0.1); i++) {
            closedFor++;
        }
        assertThat(closedFor).isBetween(1, 8);
    }

    @Test
    void aFewStepsDippingInsideANoisyEpisodeDoNotOpenIt() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 64);
        burst(l, 1.67);
        for (int i = 0; i < 40; i++) {
            assertThat(l.observe(true, Math.log(1.67), NEAR, Double.NaN)).isTrue();
        }
        // three steps of a noisy throttle (a light batch, a short context) run close to the model: the short mean
        // falls well below the episode's, and comes back
        for (int i = 0; i < 3; i++) {
            assertThat(l.observe(false, Math.log(1.1), NEAR, Double.NaN)).as("dip step %d", i).isTrue();
        }
        for (int i = 0; i < 20; i++) {
            assertThat(l.observe(true, Math.log(1.67), NEAR, Double.NaN)).isTrue();
        }
    }

    @Test
    void aBurstAfterStepsThatCreptUpIsDriftAndLeavesItOpen() {
        EpisodeLatch l = new EpisodeLatch();
        for (int i = 0; i < 50; i++) {
            l.observe(false, Math.log(1.2), Math.log(1.25), Double.NaN); // running high before the flags: creep
        }
        for (int i = 0; i < 6; i++) {
            assertThat(l.observe(true, Math.log(1.3), Math.log(1.25), Double.NaN)).isFalse();
        }
    }

    @Test
    void anEpisodeLongerThanAnyTransientOpensIt() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        for (int i = 0; i < EpisodeLatch.CLOSE_FLAGS; i++) {
            l.observe(true, Math.log(1.6), NEAR, Double.NaN);
        }
        int closedFor = 0;
        while (l.observe(true, Math.log(1.6), NEAR, Double.NaN)) {
            closedFor++;
        }
        assertThat(closedFor).isEqualTo(EpisodeLatch.MAX_STEPS);
    }

    @Test
    void itMeasuresTheSlowdownOverTheEpisodesFirstStepsAndKeepsItWhileTheStepsDrift() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.6);
        assertThat(l.measured()).isFalse();
        for (int i = 1; i < EpisodeLatch.ONSET_STEPS; i++) {
            assertThat(l.observe(true, Math.log(1.6), NEAR, Double.NaN)).isTrue();
        }
        assertThat(l.measured()).isTrue();
        assertThat(l.slowdownLog()).isCloseTo(Math.log(1.6), org.assertj.core.api.Assertions.within(1e-9));
        // the steps drift down slowly (the model falls behind): the measured slowdown stays
        for (int i = 0; i < 50; i++) {
            assertThat(l.observe(true, Math.log(1.6 - 0.004 * i), NEAR, Double.NaN)).isTrue();
        }
        assertThat(l.slowdownLog()).isCloseTo(Math.log(1.6), org.assertj.core.api.Assertions.within(1e-9));
    }

    /**
     * A 1.5x slowdown whose onset happened to land three of its eight steps near the model (a noisy producer): the onset
     * measures ~1.3x. Its prefill-heavy steps, whose cost the reported prompt tokens set, rose the whole 1.5x: once
     * PREFILL_WINDOW of them were seen, that is the slowdown the model learns net of, and it follows them down when the
     * slowdown ends before the latch opens.
     */
    @Test
    void anOnsetThatUnderMeasuresTheSlowdownIsCorrectedByThePrefillHeavyStepsRise() {
        EpisodeLatch l = new EpisodeLatch();
        calmWithPrefills(l, 400, 1.0);
        burst(l, 1.5);
        double[] onset = {1.02, 1.5, 1.05, 1.5, 1.04, 1.5};
        for (double r : onset) {
            assertThat(l.observe(r > 1.2, Math.log(r), NEAR, 0.1)).isTrue();
        }
        assertThat(l.measured()).isTrue();
        double onsetLog = (3 * Math.log(1.5) + Math.log(1.02) + Math.log(1.05) + Math.log(1.04) + 2 * Math.log(1.5)) / 8;
        assertThat(l.slowdownLog()).as("measured at the onset alone").isCloseTo(onsetLog, within(1e-9));
        for (int i = 0; i < EpisodeLatch.PREFILL_WINDOW; i++) {
            assertThat(l.slowdownLog()).as("%d prefill-heavy steps", i).isCloseTo(onsetLog, within(1e-9));
            l.observe(true, Math.log(1.5), NEAR, 0.1);
            assertThat(l.observe(true, Math.log(1.5), NEAR, 0.7)).isTrue();
        }
        assertThat(l.surge()).isFalse();
        assertThat(Math.exp(l.slowdownLog())).as("the prefill-heavy steps' rise").isCloseTo(1.5, within(0.01));
        assertThat(Math.exp(throughHeader(l).slowdownLog())).as("restored").isCloseTo(1.5, within(0.01));
        // the prefill-heavy steps come back while the decode-heavy ones still run slow: the measure falls with them,
        // under the onset's, not back to it
        for (int i = 0; i < 8; i++) {
            l.observe(true, Math.log(1.5), NEAR, 0.1);
            assertThat(l.observe(false, 0, NEAR, 0.7)).isTrue();
        }
        assertThat(l.surge()).isFalse();
        assertThat(l.slowdownLog()).isCloseTo(l.prefillRiseLog(), within(1e-9)).isLessThan(onsetLog).isPositive();
    }

    @Test
    void prefillHeavyStepsThatRoseLessThanTheOnsetLeaveItsMeasure() {
        EpisodeLatch l = new EpisodeLatch();
        calmWithPrefills(l, 400, 1.0);
        burst(l, 1.8);
        for (int i = 0; i < 10; i++) {
            l.observe(true, Math.log(1.8), NEAR, 0.1);
        }
        for (int i = 0; i < 2 * EpisodeLatch.PREFILL_WINDOW; i++) {
            // 1.5x: more than half the onset's 1.8x in log, so no surge; less than it, so not the measure
            assertThat(l.observe(true, Math.log(1.5), NEAR, 0.7)).isTrue();
        }
        assertThat(l.surge()).isFalse();
        assertThat(Math.exp(l.slowdownLog())).isCloseTo(1.8, within(1e-9));
    }

    @Test
    void anOnsetNoSlowerThanTheModelMeasuresNoSlowdown() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.5);
        for (int i = 3; i < EpisodeLatch.ONSET_STEPS + 4; i++) {
            l.observe(false, Math.log(0.5), Math.log(0.4), Double.NaN); // far below, yet not near: no drop run
        }
        assertThat(l.slowdownLog()).isZero();
    }

    @Test
    void anEpisodeWhosePrefillHeavyStepsRunNearTheModelOpensAsASurgeAndStaysOpenUntilTheStepsComeBack() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.5);
        int closedFor = 0;
        for (int i = 0; i < 100 && l.closed(); i++) {
            boolean prefillHeavy = i % 4 == 0;
            l.observe(!prefillHeavy, Math.log(prefillHeavy ? 1.05 : 1.5), NEAR, prefillHeavy ? 0.7 : 0.1);
            closedFor++;
        }
        assertThat(l.closed()).isFalse();
        assertThat(l.surge()).isTrue();
        assertThat(closedFor).isLessThanOrEqualTo(EpisodeLatch.ONSET_STEPS + 4 * EpisodeLatch.PREFILL_EVIDENCE);
        // more bursts of flags do not close it while the model catches up...
        for (int i = 0; i < 50; i++) {
            assertThat(l.observe(true, Math.log(1.45), NEAR, 0.1)).isFalse();
        }
        // ...and once the steps are back near the model it is an ordinary open latch again
        for (int i = 0; i < EpisodeLatch.EXIT_RUN; i++) {
            l.observe(false, 0.01, NEAR, 0.1);
        }
        assertThat(l.surge()).isFalse();
        calm(l, 30);
        burst(l, 1.6);
    }

    /** A latch that opened as a context surge and waits for the steps to come back near the model. */
    private static EpisodeLatch surged() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.5);
        for (int i = 0; i < 100 && l.closed(); i++) {
            boolean prefillHeavy = i % 4 == 0;
            l.observe(!prefillHeavy, Math.log(prefillHeavy ? 1.05 : 1.5), NEAR, prefillHeavy ? 0.7 : 0.1);
        }
        assertThat(l.surge()).isTrue();
        return l;
    }

    @Test
    void aJumpFromStepsBackNearTheModelEndsTheWaitForASurgesEndAndClosesIt() {
        for (int near : new int[] {EpisodeLatch.JUMP_NEAR_RUN - 1, EpisodeLatch.JUMP_NEAR_RUN}) {
            EpisodeLatch l = surged();
            for (int i = 0; i < near; i++) {
                assertThat(l.observe(false, 0.01, NEAR, 0.1)).isFalse();
            }
            boolean closes = near >= EpisodeLatch.JUMP_NEAR_RUN;
            // and a latch restored there judges the same
            for (EpisodeLatch x : java.util.List.of(l, throughHeader(l))) {
                assertThat(x.observe(true, Math.log(1.9), NEAR, 0.1)).isFalse();
                assertThat(x.observe(true, Math.log(1.9), NEAR, 0.1)).as("%d steps near the model before", near).isEqualTo(closes);
                assertThat(x.surge()).isEqualTo(!closes);
            }
        }
        // flags long after the last near steps are still the surge's
        EpisodeLatch l = surged();
        for (int i = 0; i < EpisodeLatch.JUMP_NEAR_RUN; i++) {
            l.observe(false, 0.01, NEAR, 0.1);
        }
        for (int i = 0; i < 4; i++) {
            l.observe(false, Math.log(1.3), NEAR, 0.1);
        }
        assertThat(l.observe(true, Math.log(1.9), NEAR, 0.1)).isFalse();
        assertThat(l.observe(true, Math.log(1.9), NEAR, 0.1)).isFalse();
        assertThat(l.surge()).isTrue();
    }

    @Test
    void aFlaggedPrefillHeavyStepAmidFlagsEndsTheWaitForASurgesEndAndClosesIt() {
        // the steps never came back near the model (the level still catching up with the surge), then a slowdown
        EpisodeLatch l = surged();
        for (int i = 0; i < 10; i++) {
            assertThat(l.observe(false, Math.log(1.15), NEAR, 0.1)).isFalse();
        }
        assertThat(l.observe(true, Math.log(2.0), NEAR, 0.1)).isFalse();
        assertThat(l.observe(true, Math.log(2.0), NEAR, 0.1)).as("decode-heavy flags: the surge's as much as a slowdown's").isFalse();
        assertThat(l.surge()).isTrue();
        EpisodeLatch restored = throughHeader(l);
        for (EpisodeLatch x : java.util.List.of(l, restored)) {
            assertThat(x.observe(true, Math.log(2.0), NEAR, 0.7)).as("a prefill-heavy step flagged: the device is slow").isTrue();
            assertThat(x.surge()).isFalse();
        }
        // a prefill-heavy step flagged on its own among unflagged steps (a stall) is no burst
        EpisodeLatch alone = surged();
        for (int i = 0; i < 10; i++) {
            alone.observe(false, Math.log(1.15), NEAR, 0.1);
        }
        assertThat(alone.observe(true, Math.log(2.0), NEAR, 0.7)).isFalse();
        assertThat(alone.surge()).isTrue();
    }

    @Test
    void anEpisodeWhosePrefillHeavyStepsAreAsSlowIsASlowdownAndStaysClosed() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 50);
        burst(l, 1.6);
        for (int i = 0; i < 300; i++) {
            boolean prefillHeavy = i % 4 == 0;
            assertThat(l.observe(true, Math.log(1.6), NEAR, prefillHeavy ? 0.7 : 0.1)).isTrue();
        }
        assertThat(l.surge()).isFalse();
    }

    @Test
    void itMeasuresHowFarTheEpisodesPrefillHeavyStepsRoseOverWhereTheyRanBefore() {
        EpisodeLatch l = new EpisodeLatch();
        calmWithPrefills(l, 400, 0.9);
        burst(l, 1.35);
        assertThat(l.prefillRiseLog()).as("no prefill-heavy step in the episode yet").isNaN();
        for (int i = 0; i < 40; i++) {
            boolean prefillHeavy = i % 4 == 0;
            // decode-heavy steps diluted to 1.3x, prefill-heavy ones 1.55x over where they ran (0.9 of the model)
            l.observe(false, Math.log(prefillHeavy ? 0.9 * 1.55 : 1.3), NEAR, prefillHeavy ? 0.7 : 0.1);
        }
        assertThat(l.closed()).isTrue();
        assertThat(Math.exp(l.prefillRiseLog())).as("their rise, not their ratio").isCloseTo(1.55, within(0.02));
        assertThat(Math.exp(throughHeader(l).prefillRiseLog())).as("restored").isCloseTo(1.55, within(0.02));
    }

    /** Calm steps, every fourth prefill-heavy and running at {@code prefillRatio} of the model, the rest near it. */
    private static void calmWithPrefills(EpisodeLatch l, int steps, double prefillRatio) {
        for (int i = 0; i < steps; i++) {
            boolean prefillHeavy = i % 4 == 0;
            double r = prefillHeavy ? Math.log(prefillRatio) : (i % 2 == 0 ? 1 : -1) * 0.02;
            assertThat(l.observe(false, r, NEAR, prefillHeavy ? 0.7 : 0.1)).isFalse();
        }
    }

    @Test
    void prefillHeavyStepsTheModelOverPredictsAreJudgedByTheirRiseNotTheirRatio() {
        // The model over-predicts prefill-heavy steps by 1.4x. A 1.75x slowdown of every step brings them to
        // 1.25x of it: under half the slowdown in log, yet they rose by all of it. A slowdown, not a surge.
        EpisodeLatch before = new EpisodeLatch();
        calmWithPrefills(before, 400, 1 / 1.4);
        EpisodeLatch l = throughHeader(before); // where the prefill-heavy steps ran is part of the state
        burst(l, 1.75);
        for (int i = 0; i < 300; i++) {
            boolean prefillHeavy = i % 4 == 0;
            boolean closed = l.observe(!prefillHeavy, Math.log(prefillHeavy ? 1.75 / 1.4 : 1.75), NEAR, prefillHeavy ? 0.7 : 0.1);
            assertThat(closed).as("step %d of the slowdown", i).isTrue();
        }
        assertThat(l.surge()).isFalse();

        // Over the same model, decode steps that jump while the prefill-heavy steps stay where they ran: a surge.
        EpisodeLatch s = new EpisodeLatch();
        calmWithPrefills(s, 400, 1 / 1.4);
        burst(s, 1.6);
        for (int i = 0; i < 100 && s.closed(); i++) {
            boolean prefillHeavy = i % 4 == 0;
            s.observe(!prefillHeavy, Math.log(prefillHeavy ? 1 / 1.4 : 1.6), NEAR, prefillHeavy ? 0.7 : 0.1);
        }
        assertThat(s.surge()).isTrue();
    }

    /**
     * A 1.5x throttle on an iteration log whose load moves into decode batches lighter than any the model knows: the
     * extrapolation runs high there, those steps read 1.05x, and the latch opens on the drop while the prefill-heavy steps
     * still run at 1.5x. When the flags come back at the slowdown the episode resumes with its measure: the light steps
     * among the first after it (1.1x) are no new onset, and the prefill-heavy steps of the gap taught the calm mean
     * nothing. A latch restored in the gap resumes alike.
     */
    @Test
    void flagsBackAtTheSlowdownSoonAfterADropResumeTheEpisodeWithItsMeasure() {
        EpisodeLatch l = droppedIntoLightWorkDuringA15xThrottle();
        EpisodeLatch restored = throughHeader(l);
        for (EpisodeLatch x : java.util.List.of(l, restored)) {
            assertThat(x.observe(true, Math.log(1.5), NEAR, 0.1)).isFalse();
            assertThat(x.observe(true, Math.log(1.5), NEAR, 0.1)).as("the flags back close it").isTrue();
            assertThat(x.measured()).as("resumed, not measured again").isTrue();
            for (int i = 0; i < 24; i++) {
                boolean slow = i % 2 == 0;
                assertThat(x.observe(slow, Math.log(slow ? 1.5 : 1.1), NEAR, i % 8 == 0 ? 0.7 : 0.1)).isTrue();
            }
            assertThat(Math.exp(x.slowdownLog())).isCloseTo(1.5, within(0.03));
            assertThat(Math.exp(x.prefillRiseLog())).as("the gap's prefill-heavy steps were not calm").isCloseTo(1.5, within(0.03));
        }
    }

    /** A resumed episode goes on counting its steps toward {@link EpisodeLatch#MAX_STEPS}: a drop does not start them again. */
    @Test
    void aResumedEpisodeOpensWhenAllItsHeldStepsReachTheLongest() {
        EpisodeLatch l = droppedIntoLightWorkDuringA15xThrottle();
        l.observe(true, Math.log(1.5), NEAR, 0.1);
        assertThat(l.observe(true, Math.log(1.5), NEAR, 0.1)).isTrue();
        int closedFor = 0;
        while (l.observe(true, Math.log(1.5), NEAR, 0.1)) {
            closedFor++;
        }
        // the episode was held 100 steps and its drop's before it opened
        assertThat(closedFor).isBetween(EpisodeLatch.MAX_STEPS - 115, EpisodeLatch.MAX_STEPS - 100);
    }

    /** A fault well over the episode's slowdown soon after the drop is a new episode, measured at its own onset. */
    @Test
    void aJumpWellOverTheSlowdownSoonAfterADropIsANewEpisode() {
        EpisodeLatch l = droppedIntoLightWorkDuringA15xThrottle();
        for (int i = 0; i < EpisodeLatch.ONSET_STEPS + 1; i++) {
            l.observe(true, Math.log(2.1), NEAR, 0.1);
        }
        assertThat(l.closed()).isTrue();
        assertThat(Math.exp(l.slowdownLog())).isCloseTo(2.1, within(0.01));
    }

    /** The flags back come after {@link EpisodeLatch#RESUME_STEPS}: a new episode, measured at its onset. */
    @Test
    void flagsBackAtTheSlowdownLongAfterADropAreANewEpisode() {
        EpisodeLatch l = droppedIntoLightWorkDuringA15xThrottle();
        for (int i = 0; i < EpisodeLatch.RESUME_STEPS; i++) {
            assertThat(l.observe(false, Math.log(1.05), NEAR, 0.1)).isFalse();
        }
        l.observe(true, Math.log(1.5), NEAR, 0.1);
        assertThat(l.observe(true, Math.log(1.5), NEAR, 0.1)).isTrue();
        assertThat(l.measured()).as("its onset to be measured").isFalse();
    }

    /** An episode too short to have read its prefill-heavy steps is not resumed: its measure is an onset's like a new one's. */
    @Test
    void flagsBackSoonAfterTheDropOfAShortEpisodeAreANewEpisode() {
        EpisodeLatch l = droppedIntoLightWorkDuringA15xThrottle(20);
        l.observe(true, Math.log(1.5), NEAR, 0.1);
        assertThat(l.observe(true, Math.log(1.5), NEAR, 0.1)).isTrue();
        assertThat(l.measured()).as("its onset to be measured").isFalse();
    }

    private static EpisodeLatch droppedIntoLightWorkDuringA15xThrottle() {
        return droppedIntoLightWorkDuringA15xThrottle(100);
    }

    /**
     * A 1.5x episode of {@code steps} on an iteration log (every fourth step prefill-heavy), then decode steps at 1.05x amid
     * prefill-heavy ones still at 1.5x: the drop opens it.
     */
    private static EpisodeLatch droppedIntoLightWorkDuringA15xThrottle(int steps) {
        EpisodeLatch l = new EpisodeLatch();
        calmWithPrefills(l, 400, 1.0);
        burst(l, 1.5);
        for (int i = 0; i < steps; i++) {
            assertThat(l.observe(true, Math.log(1.5), NEAR, i % 4 == 0 ? 0.7 : 0.1)).isTrue();
        }
        assertThat(Math.exp(l.slowdownLog())).isCloseTo(1.5, within(0.01));
        int closedFor = 0;
        for (int i = 0; l.observe(i % 8 == 0, Math.log(i % 8 == 0 ? 1.5 : 1.05), NEAR, i % 8 == 0 ? 0.7 : 0.1); i++) {
            closedFor++;
        }
        assertThat(closedFor).as("steps of the drop before it opened").isBetween(4, 12);
        // the light work goes on, the prefill-heavy steps still at the slowdown
        for (int i = 1; i < 30; i++) {
            assertThat(l.observe(i % 8 == 0, Math.log(i % 8 == 0 ? 1.5 : 1.05), NEAR, i % 8 == 0 ? 0.7 : 0.1)).isFalse();
        }
        return l;
    }

    /**
     * A throttle that begins as the load falls into decode batches lighter than the batch level was learned at: its
     * decode-heavy steps read near the model, only the prefill-heavy ones (every fourth step) rose, to 1.38-1.46x, every
     * other one flagged. Never two flags among four steps, yet the latch closes within their first steps, measured by
     * their rise, and the decode-heavy steps near the model, however many in a row, do not end it; three prefill-heavy
     * steps back near the model do. A latch restored on the way closes on the same step.
     */
    @Test
    void aJumpOfThePrefillHeavyStepsAloneClosesItAndTheyAloneEndIt() {
        EpisodeLatch l = new EpisodeLatch();
        calmWithPrefills(l, 400, 1.0);
        EpisodeLatch restored = null;
        int closedAt = -1;
        for (int i = 0; i < 64 && closedAt < 0; i++) {
            boolean prefillHeavy = i % 4 == 0;
            boolean flagged = prefillHeavy && i % 8 == 0;
            double r = prefillHeavy ? (flagged ? 1.46 : 1.38) : (i % 2 == 0 ? 1.04 : 0.97);
            if (i == 4) {
                restored = throughHeader(l);
            }
            boolean closed = l.observe(flagged, Math.log(r), NEAR, prefillHeavy ? 0.8 : 0.1);
            if (restored != null) {
                assertThat(restored.observe(flagged, Math.log(r), NEAR, prefillHeavy ? 0.8 : 0.1)).as("restored, step %d", i).isEqualTo(closed);
            }
            if (closed) {
                closedAt = i;
            }
        }
        assertThat(closedAt).as("closed on a flagged prefill-heavy step within the throttle's first 32").isBetween(8, 32);
        assertThat(closedAt % 8).isZero();
        assertThat(l.measured()).isTrue();
        assertThat(Math.exp(l.slowdownLog())).as("their rise so far").isBetween(1.3, 1.46);
        for (int i = 1; i <= 400; i++) {
            boolean prefillHeavy = i % 4 == 0;
            double r = prefillHeavy ? (i % 8 == 0 ? 1.46 : 1.38) : (i % 2 == 0 ? 1.04 : 0.97);
            assertThat(l.observe(prefillHeavy && i % 8 == 0, Math.log(r), NEAR, prefillHeavy ? 0.8 : 0.1)).as("step %d", i).isTrue();
        }
        // 1.42x on average, over where they ran: their slow mean took a little of the throttle's first steps
        assertThat(Math.exp(l.slowdownLog())).as("their rise").isBetween(1.35, 1.42);
        // the throttle ends: the prefill-heavy steps come back near the model, the third of them opens it
        int prefillBack = 0;
        for (int i = 1; l.observe(false, i % 4 == 0 ? 0.01 : -0.01, NEAR, i % 4 == 0 ? 0.8 : 0.1); i++) {
            prefillBack += i % 4 == 0 ? 1 : 0;
            assertThat(i).isLessThan(40);
        }
        assertThat(prefillBack).isEqualTo(EpisodeLatch.PREFILL_EXIT_RUN - 1);
    }

    /**
     * What the prefill-heavy steps' jump does not take: one flagged step among calm ones, a creep the slow mean follows,
     * or a jump while the other steps ran high (drift, not a jump from calm steps).
     */
    @Test
    void oneFlaggedPrefillHeavyStepACreepOrAJumpAmidHighStepsLeavesItOpen() {
        EpisodeLatch one = new EpisodeLatch();
        calmWithPrefills(one, 400, 1.0);
        for (int i = 0; i < 200; i++) {
            boolean prefillHeavy = i % 4 == 0;
            boolean flagged = i == 40;
            assertThat(one.observe(flagged, flagged ? Math.log(2.5) : prefillHeavy ? 0.02 : -0.01, NEAR, prefillHeavy ? 0.8 : 0.1)).isFalse();
        }

        // the prefill-heavy steps creep from 1.0x to 1.5x over 8,000 steps, those over 1.4x flagged
        EpisodeLatch creep = new EpisodeLatch();
        calmWithPrefills(creep, 400, 1.0);
        for (int i = 0; i < 8_000; i++) {
            boolean prefillHeavy = i % 4 == 0;
            double r = prefillHeavy ? 1.0 + 0.5 * i / 8_000 * (i % 8 == 0 ? 1.02 : 0.98) : 1.0;
            assertThat(creep.observe(prefillHeavy && r > 1.4, Math.log(r), NEAR, prefillHeavy ? 0.8 : 0.1)).as("step %d", i).isFalse();
        }

        // the other steps ran 1.2x over the model (within a noisy instance's margin) before the prefill-heavy steps jumped
        EpisodeLatch high = new EpisodeLatch();
        for (int i = 0; i < 400; i++) {
            boolean prefillHeavy = i % 4 == 0;
            high.observe(false, prefillHeavy ? 0 : Math.log(1.2), Math.log(1.25), prefillHeavy ? 0.8 : 0.1);
        }
        for (int i = 0; i < 200; i++) {
            boolean prefillHeavy = i % 4 == 0;
            assertThat(high.observe(prefillHeavy, prefillHeavy ? Math.log(1.6) : Math.log(1.2), Math.log(1.25), prefillHeavy ? 0.8 : 0.1))
                    .as("step %d", i).isFalse();
        }
    }

    /** A latch restored from the header {@code l} saves, through its bytes as the detector's store has them. */
    private static EpisodeLatch throughHeader(EpisodeLatch l) {
        RooflineStateHeader header = RooflineStateHeader.newBuilder().setStepsSeen(0).setStepsSinceRefit(0).setExtrapolatedSteps(0)
                .setBeyondSteps(0).setElevatedShare(0).setLevel(1).setDriftCurrent(java.nio.ByteBuffer.allocate(0))
                .setDriftCurrentTailMask(java.nio.ByteBuffer.allocate(0)).setDriftCurrentStartNs(0).build();
        l.saveTo(header);
        RooflineStateHeader read = io.stepline.schemas.EventSerdes.ROOFLINE_STATE_HEADER.decode(
                io.stepline.schemas.EventSerdes.ROOFLINE_STATE_HEADER.encode(header));
        EpisodeLatch restored = new EpisodeLatch();
        restored.restore(read);
        return restored;
    }

    @Test
    void itsStateRoundTripsThroughTheHeader() {
        EpisodeLatch l = new EpisodeLatch();
        calm(l, 20);
        for (int i = 0; i < 5; i++) {
            l.observe(true, Math.log(1.6), NEAR, Double.NaN);
        }
        l.observe(false, Math.log(1.5), NEAR, Double.NaN);
        EpisodeLatch restored = throughHeader(l);
        assertThat(restored.closed()).isTrue();
        assertThat(restored.measured()).isEqualTo(l.measured());
        assertThat(restored.slowdownLog()).isEqualTo(l.slowdownLog());
        // both open on the same step of a slow fall back
        int step = 0;
        boolean open = false;
        while (!open && step < 100) {
            double r = Math.log(1.5 - 0.02 * step++);
            boolean a = l.observe(false, r, NEAR, Double.NaN);
            boolean b = restored.observe(false, r, NEAR, Double.NaN);
            assertThat(b).as("step %d", step).isEqualTo(a);
            open = !a;
        }
        assertThat(open).isTrue();
        assertThat(step).isGreaterThan(3);
    }
}
