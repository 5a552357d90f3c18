package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class RecentVerdictsTest {
    private static final double SLOW = Math.log(1.6);
    private static final double NEAR = Math.log(1.02);
    /** A quiet instance's learning margin: the default learning ratio, narrower than {@link RecentVerdicts#LOG_ELEVATED}. */
    private static final double QUIET_MARGIN = Math.log(1.08);

    /** One judged step: its ratio first, then its verdict, as the robust roofline feeds them. */
    private static void step(RecentVerdicts r, boolean known, boolean reported, double logRatio) {
        step(r, known, reported, logRatio, QUIET_MARGIN);
    }

    private static void step(RecentVerdicts r, boolean known, boolean reported, double logRatio, double learnLog) {
        r.judged(known, logRatio, learnLog);
        r.verdict(known, reported, logRatio);
    }

    /** A fresh instance's verdicts after {@code n} known steps, each reported at {@link #SLOW}. */
    private static RecentVerdicts afterSlowKnownSteps(int n) {
        RecentVerdicts r = new RecentVerdicts();
        for (int i = 0; i < n; i++) {
            step(r, true, true, SLOW);
        }
        return r;
    }

    @Test
    void threeReportsAmongTheLastFourStepsAreABurstThatOneQuietStepDoesNotEnd() {
        RecentVerdicts r = new RecentVerdicts();
        step(r, true, true, SLOW);
        step(r, true, true, SLOW);
        assertThat(r.inBurst()).isFalse();
        assertThat(r.amidReports()).isTrue();
        step(r, true, true, SLOW);
        assertThat(r.inBurst()).isTrue();
        step(r, true, false, NEAR);
        assertThat(r.inBurst()).isTrue();
        step(r, true, false, NEAR);
        assertThat(r.inBurst()).isFalse();
        // the burst's slowdown: a running mean of its reported steps' log ratios, 1/8 per step from 0
        double expected = 0;
        for (int i = 0; i < 3; i++) {
            expected += RecentVerdicts.BURST_ALPHA * (SLOW - expected);
        }
        assertThat(r.burstLog()).isCloseTo(expected, within(1e-12));
    }

    @Test
    void aChainMayStartOnlyAtTheFirstStepOfNewWorkRightAfterThreeReportedKnownSteps() {
        RecentVerdicts r = afterSlowKnownSteps(2);
        r.judged(false, SLOW, QUIET_MARGIN);
        assertThat(r.justLeftSlowKnownWork()).as("two reported known steps").isFalse();
        r.verdict(false, true, SLOW);
        r = afterSlowKnownSteps(3);
        r.judged(false, SLOW, QUIET_MARGIN);
        assertThat(r.justLeftSlowKnownWork()).isTrue();
        r.verdict(false, true, SLOW);
        r.judged(false, SLOW, QUIET_MARGIN);
        assertThat(r.justLeftSlowKnownWork()).as("the second step of new work").isFalse();
        r.verdict(false, true, SLOW);
        // a known step not reported clears the count
        r = afterSlowKnownSteps(5);
        step(r, true, false, NEAR);
        r.judged(false, SLOW, QUIET_MARGIN);
        assertThat(r.justLeftSlowKnownWork()).isFalse();
    }

    @Test
    void newWorkAtHalfTheBurstsSlowdownKeepsTheBurstGoingAndHealthyNewWorkEndsIt() {
        RecentVerdicts r = afterSlowKnownSteps(40);
        assertThat(r.burstLog()).isCloseTo(SLOW, within(0.01));
        // new work under the ratio a burst flags there, but over half the burst's log slowdown: the slowdown goes on
        for (int i = 0; i < 10; i++) {
            step(r, false, false, 0.55 * SLOW);
            assertThat(r.inBurst()).isTrue();
        }
        // new work under half of it: the first leaves three of the last four, the second ends the burst
        step(r, false, false, 0.45 * SLOW);
        assertThat(r.inBurst()).isTrue();
        step(r, false, false, 0.45 * SLOW);
        assertThat(r.inBurst()).isFalse();
        // outside a burst the same steps start none
        for (int i = 0; i < 4; i++) {
            step(r, false, false, 0.55 * SLOW);
        }
        assertThat(r.inBurst()).isFalse();
        assertThat(r.amidReports()).isFalse();
    }

    @Test
    void knownWorkUnderTheBoundEndsABurstHoweverElevated() {
        RecentVerdicts r = afterSlowKnownSteps(4);
        // the bound in known work is the model's own: a known step it did not report speaks for itself
        step(r, true, false, 0.9 * SLOW);
        step(r, true, false, 0.9 * SLOW);
        assertThat(r.inBurst()).isFalse();
    }

    @Test
    void aBurstHoldsWorkBeyondTheTrainingForItsFirstStepsOnly() {
        RecentVerdicts r = new RecentVerdicts();
        assertThat(r.holdBeyondTraining()).isFalse();
        for (int i = 0; i < 4; i++) {
            step(r, true, true, SLOW);
        }
        int held = 0;
        while (r.holdBeyondTraining()) {
            held++;
            assertThat(held).isLessThanOrEqualTo(RecentVerdicts.BURST_HOLD);
        }
        assertThat(held).isEqualTo(RecentVerdicts.BURST_HOLD);
        // a step beyond the training under the burst's ratio ends the burst, and with it the hold
        r.endBurst();
        r.endBurst();
        assertThat(r.inBurst()).isFalse();
    }

    @Test
    void theElevatedShareRisesWithSlowKnownStepsAndFallsOnlyAfterARunOfNewWorkNearTheModel() {
        RecentVerdicts r = new RecentVerdicts();
        for (int i = 0; i < 100; i++) {
            step(r, true, false, Math.log(1.2));
        }
        assertThat(r.calm()).isFalse();
        // new work near the model: its first NEW_WORK_RUN steps say nothing, the next ones let the share fall
        RecentVerdicts beforeRun = new RecentVerdicts();
        for (int i = 0; i < 100; i++) {
            step(beforeRun, true, false, Math.log(1.2));
        }
        for (int i = 0; i < RecentVerdicts.NEW_WORK_RUN; i++) {
            step(r, false, false, NEAR);
        }
        RooflineStateHeader a = new RooflineStateHeader();
        RooflineStateHeader b = new RooflineStateHeader();
        r.saveTo(a);
        beforeRun.saveTo(b);
        assertThat(a.getElevatedShare()).isEqualTo(b.getElevatedShare());
        for (int i = 0; i < 200; i++) {
            step(r, false, false, NEAR);
        }
        assertThat(r.calm()).isTrue();
        // new work above the model never raises it
        for (int i = 0; i < 200; i++) {
            step(r, false, false, Math.log(1.3));
        }
        assertThat(r.calm()).isTrue();
    }

    @Test
    void knownWorkSpeaksForNewWorkOnlyLately() {
        RecentVerdicts r = new RecentVerdicts();
        step(r, true, true, SLOW);
        step(r, true, true, SLOW);
        assertThat(r.slowInKnownWork()).isFalse();
        step(r, true, true, SLOW);
        assertThat(r.slowInKnownWork()).isTrue();
        assertThat(r.healthyKnownWork()).isFalse();
        for (int i = 0; i < RecentVerdicts.SLOW_KNOWN_WITHIN; i++) {
            step(r, false, false, NEAR);
        }
        assertThat(r.slowInKnownWork()).isTrue();
        step(r, false, false, NEAR);
        assertThat(r.slowInKnownWork()).isFalse();
        // a healthy known step clears the run, and says the device is healthy
        step(r, true, false, NEAR);
        assertThat(r.slowInKnownWork()).isFalse();
        assertThat(r.healthyKnownWork()).isTrue();
    }

    @Test
    void eightKnownStepsInARowNearTheModelEndAnEpisodeTheShareStillCounts() {
        RecentVerdicts r = afterSlowKnownSteps(200);
        assertThat(r.calm()).isFalse();
        // seven known steps near the model, then one above it: the share alone still says an episode is under way
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN - 1; i++) {
            step(r, true, false, NEAR);
        }
        step(r, true, false, Math.log(1.15));
        assertThat(r.calm()).isFalse();
        // new work between known steps does not break a run, and does not count in it
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN - 1; i++) {
            step(r, true, false, NEAR);
            step(r, false, true, SLOW);
        }
        assertThat(r.calm()).isFalse();
        step(r, true, false, NEAR);
        assertThat(r.calm()).isTrue();
        // just under the line: one elevated known step brings the episode back
        step(r, true, true, SLOW);
        assertThat(r.calm()).isFalse();
    }

    @Test
    void onANoisyInstanceKnownStepsWithinItsLearningMarginEndAnEpisode() {
        double noisyMargin = 2.5 * 0.08;
        double healthyButOver = Math.log(1.15);
        RecentVerdicts noisy = afterSlowKnownSteps(200);
        RecentVerdicts quiet = afterSlowKnownSteps(200);
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN; i++) {
            step(noisy, true, false, healthyButOver, noisyMargin);
            step(quiet, true, false, healthyButOver, QUIET_MARGIN);
        }
        assertThat(noisy.calm()).as("1.15x is within 2.5 sigma of an 8%-spread instance").isTrue();
        assertThat(quiet.calm()).as("1.15x is over 1.1x, the quiet instance's near").isFalse();
        // a step over the margin breaks the run; the steps after start it again
        RecentVerdicts broken = afterSlowKnownSteps(200);
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN - 1; i++) {
            step(broken, true, false, healthyButOver, noisyMargin);
        }
        step(broken, true, false, noisyMargin + 0.01, noisyMargin);
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN - 1; i++) {
            step(broken, true, false, healthyButOver, noisyMargin);
        }
        assertThat(broken.calm()).as("seven near steps since the one over the margin").isFalse();
        step(broken, true, false, healthyButOver, noisyMargin);
        assertThat(broken.calm()).isTrue();
        // a margin narrower than 1.1x, or none yet, is taken as 1.1x
        RecentVerdicts unknown = afterSlowKnownSteps(200);
        for (int i = 0; i < RecentVerdicts.EPISODE_OVER_RUN; i++) {
            step(unknown, true, false, Math.log(1.09), Double.NaN);
        }
        assertThat(unknown.calm()).isTrue();
    }

    @Test
    void aStepOverItsOwnBoundSpeaksForTheBurstForSixteenJudgedStepsItselfCounted() {
        RecentVerdicts r = new RecentVerdicts();
        assertThat(r.ownReportLately()).as("a fresh instance").isFalse();
        r.ownReport(true);
        assertThat(r.ownReportLately()).isTrue();
        for (int i = 1; i <= RecentVerdicts.OWN_REPORT_WITHIN; i++) {
            r.ownReport(false);
            assertThat(r.ownReportLately()).as("%d judged steps after it", i).isTrue();
        }
        r.ownReport(false);
        assertThat(r.ownReportLately()).as("%d judged steps after it", RecentVerdicts.OWN_REPORT_WITHIN + 1).isFalse();
        for (int i = 0; i < 3 * RecentVerdicts.NO_OWN_REPORT; i++) {
            r.ownReport(false);
        }
        RooflineStateHeader h = new RooflineStateHeader();
        r.saveTo(h);
        assertThat(h.getStepsSinceOwnReport()).as("capped").isEqualTo(RecentVerdicts.NO_OWN_REPORT);
        r.ownReport(true);
        assertThat(r.ownReportLately()).isTrue();
    }

    @Test
    void aRestoredCopyReadsAsTheOriginal() {
        RecentVerdicts r = new RecentVerdicts();
        for (int i = 0; i < 40; i++) {
            step(r, i % 3 != 0, i % 5 < 3, i % 5 < 3 ? SLOW : NEAR);
        }
        for (int i = 0; i < 3; i++) {
            step(r, false, true, SLOW);
        }
        r.ownReport(true);
        for (int i = 0; i < 5; i++) {
            r.ownReport(false);
        }
        assertThat(r.holdBeyondTraining()).isTrue();
        RooflineStateHeader h = new RooflineStateHeader();
        r.saveTo(h);
        RecentVerdicts copy = new RecentVerdicts();
        copy.restore(h);
        RooflineStateHeader again = new RooflineStateHeader();
        copy.saveTo(again);
        assertThat(again.getElevatedShare()).isEqualTo(h.getElevatedShare());
        assertThat(again.getRecentReports()).isEqualTo(h.getRecentReports());
        assertThat(again.getBurstLog()).isEqualTo(h.getBurstLog());
        assertThat(again.getBurstHeld()).isEqualTo(h.getBurstHeld()).isEqualTo(1);
        assertThat(again.getStepsSinceKnown()).isEqualTo(h.getStepsSinceKnown());
        assertThat(again.getKnownFlags()).isEqualTo(h.getKnownFlags());
        assertThat(again.getLastKnownLog()).isEqualTo(h.getLastKnownLog());
        assertThat(again.getHealthyKnownRun()).isEqualTo(h.getHealthyKnownRun()).isEqualTo(1);
        assertThat(copy.inBurst()).isEqualTo(r.inBurst());
        assertThat(copy.burstLog()).isEqualTo(r.burstLog());
        assertThat(copy.slowInKnownWork()).isEqualTo(r.slowInKnownWork());
        assertThat(again.getStepsSinceOwnReport()).isEqualTo(h.getStepsSinceOwnReport()).isEqualTo(5);
        assertThat(copy.ownReportLately()).isTrue();
    }
}
