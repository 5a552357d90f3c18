package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class DriftWatchTest {
    private static final long STEP_NS = 20_000_000L;

    @Test
    void aShiftThatOutlastsTheWindowRaisesOneAlarmWithItsSizeAndStart() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        SplittableRandom rng = new SplittableRandom(1);
        DriftWatch.Alarm alarm = null;
        int at = -1;
        for (int i = 0; i < 6_000 && alarm == null; i++) {
            double shift = i >= 2_050 ? Math.log(1.3) : 0;
            alarm = w.observe(shift + rng.nextGaussian() * 0.03, i * STEP_NS, true, 0);
            at = i;
        }
        assertThat(alarm).isNotNull();
        assertThat(at).as("within 2,000 steps of the start").isBetween(2_050, 4_050);
        assertThat(alarm.ratio()).isBetween(1.27, 1.33);
        assertThat(alarm.sinceNs()).isBetween(2_000 * STEP_NS, 2_100 * STEP_NS);
        for (int i = at + 1; i < at + 1_400; i++) {
            assertThat(w.observe(Math.log(1.3), i * STEP_NS, true, 0)).as("the window starts again after an alarm").isNull();
        }
    }

    @Test
    void aShiftUnderTheStepBoundIsFoundAfterQuickBlocksOneAboveItAfterQuickOverBlocksAFaultSizedOneAfterTheWholeWindow() {
        double bound = Math.log(1.35);
        int block = DriftWatch.Settings.DEFAULT_BLOCK_STEPS;
        // a 1.22x regression under a 1.35x bound: no step of it is flagged, the watch alone finds it
        assertThat(stepsToAlarm(1.22, bound)).isEqualTo(DriftWatch.QUICK_BLOCKS * block - 1);
        assertThat(stepsToAlarm(1.22, Double.NaN)).as("no bound given: the whole window").isGreaterThanOrEqualTo(13 * block - 1);
        // a 1.45x regression over the bound: its steps are mostly flagged, its report comes after more blocks
        assertThat(stepsToAlarm(1.45, bound)).isEqualTo(DriftWatch.QUICK_OVER_BLOCKS * block - 1);
        assertThat(stepsToAlarm(1.45, Double.NaN)).as("no bound given: the whole window").isGreaterThanOrEqualTo(13 * block - 1);
        // a 1.6x slowdown is as large as a fault: a throttle of 1,200 steps raises no alarm
        assertThat(stepsToAlarm(1.6, bound)).isGreaterThan(1_200);
    }

    /** Steps from the start of a shift by {@code ratio} (spread 3%) to the alarm, given the step bound's log. */
    private static int stepsToAlarm(double ratio, double quickBelowLog) {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        SplittableRandom rng = new SplittableRandom(7);
        for (int i = 0; i < 1_000; i++) {
            assertThat(w.observe(rng.nextGaussian() * 0.03, i * STEP_NS, true, 0, quickBelowLog)).isNull();
        }
        for (int i = 0; i < 3_000; i++) {
            DriftWatch.Alarm a = w.observe(Math.log(ratio) + rng.nextGaussian() * 0.03, (1_000 + i) * STEP_NS, true, 0, quickBelowLog);
            if (a != null) {
                assertThat(a.ratio()).isCloseTo(ratio, org.assertj.core.data.Offset.offset(0.03));
                assertThat(a.sinceNs()).isEqualTo(1_000 * STEP_NS);
                return i;
            }
        }
        return Integer.MAX_VALUE;
    }

    @Test
    void aShiftStandingWhenTheInputEndsIsReadWithItsSizeAndStartOnceItHasFilledTheBlocksAskedFor() {
        int block = DriftWatch.Settings.DEFAULT_BLOCK_STEPS;
        // a fault-sized shift 800 steps before the end: no alarm yet (it waits for the whole window), but it stands
        DriftWatch w = watchWithShift(1.5, 800, 0);
        DriftWatch.Alarm end = w.standingAtEnd(6, 0);
        assertThat(end).isNotNull();
        assertThat(end.ratio()).isCloseTo(1.5, org.assertj.core.data.Offset.offset(0.03));
        assertThat(end.sinceNs()).isEqualTo(1_000 * STEP_NS);
        assertThat(w.standingAtEnd(9, 0)).as("fewer elevated blocks than asked for").isNull();
        // the level has followed part of the shift: the blocks are read against its anchor, the size is the whole shift
        DriftWatch followed = watchWithShift(1.5, 800, Math.log(1.2));
        assertThat(followed.standingAtEnd(6, Math.log(1.2)).ratio()).isCloseTo(1.5, org.assertj.core.data.Offset.offset(0.03));
        // no shift: nothing stands
        assertThat(watchWithShift(1.0, 800, 0).standingAtEnd(6, 0)).isNull();
        assertThat(watchWithShift(1.5, 6 * block - 50, 0).standingAtEnd(6, 0)).as("five whole blocks of it").isNull();
    }

    @Test
    void aShiftThatEndedInTheBlockUnderWayDoesNotStandAtTheEnd() {
        DriftWatch w = watchWithShift(1.5, 800, 0);
        for (int i = 0; i < DriftWatch.END_PARTIAL_STEPS; i++) {
            w.observe(0.0, (1_800 + i) * STEP_NS, true, 0, Math.log(1.35));
        }
        assertThat(w.standingAtEnd(6, 0)).isNull();
    }

    @Test
    void aShiftAlreadyAlarmedOnAndWatchedForItsEndDoesNotStandAgain() {
        DriftWatch w = watchWithShift(1.5, 800, 0);
        w.watchEnd(1.5, 2_000);
        assertThat(w.standingAtEnd(6, 0)).isNull();
    }

    /** A watch of 1,000 healthy steps (spread 3%), then {@code steps} steps shifted by {@code ratio}, blocks kept with a level risen by {@code riseLog}. */
    private static DriftWatch watchWithShift(double ratio, int steps, double riseLog) {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        SplittableRandom rng = new SplittableRandom(11);
        for (int i = 0; i < 1_000; i++) {
            assertThat(w.observe(rng.nextGaussian() * 0.03, i * STEP_NS, true, 0, Math.log(1.35))).isNull();
        }
        for (int i = 0; i < steps; i++) {
            assertThat(w.observe(Math.log(ratio) - riseLog + rng.nextGaussian() * 0.03, (1_000 + i) * STEP_NS, true, riseLog, Math.log(1.35)))
                    .as("a fault-sized shift raises no alarm before the whole window").isNull();
        }
        return w;
    }

    @Test
    void aShiftThatEndsWhileItsAlarmIsWatchedIsUndoneByTheDropAtMostTheShift() {
        int block = DriftWatch.Settings.DEFAULT_BLOCK_STEPS;
        // the re-anchored model is 1.6x too high: steps back at the level before run at 1/1.6 of it, half the shift
        // and more below it, which the first END_PARTIAL_STEPS of a block show (END_BLOCK_SHARE)
        assertEnded(1.6, 1 / 1.6, DriftWatch.END_PARTIAL_STEPS);
        // 1.15x below a 1.6x shift: less than half of it, three blocks
        assertEnded(1.6, 1 / 1.15, 3 * block);
        // a shift whose half is under the minimum ratio: three blocks whatever the drop
        assertEnded(1.15, 1 / 1.15, 3 * block);

        DriftWatch deeper = new DriftWatch(DriftWatch.Settings.defaults());
        deeper.watchEnd(1.2, 2_000);
        DriftWatch.Alarm capped = null;
        for (int i = 0; i < 400 && capped == null; i++) { // steps far lower than the shift: undone by the shift, no more
            capped = deeper.observe(-Math.log(2), i * STEP_NS, true, 0);
        }
        assertThat(capped).isNotNull();
        assertThat(capped.ratio()).isCloseTo(1 / 1.2, org.assertj.core.data.Offset.offset(1e-9));
    }

    /** The watched {@code shift} is found to have ended on the {@code steps}-th step at {@code stepRatio} to the model. */
    private static void assertEnded(double shift, double stepRatio, int steps) {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        w.watchEnd(shift, 2_000);
        assertThat(w.watchingEnd()).isTrue();
        DriftWatch.Alarm end = null;
        int at = -1;
        for (int i = 0; i < 400 && end == null; i++) {
            end = w.observe(Math.log(stepRatio), i * STEP_NS, true, 0);
            at = i;
        }
        assertThat(end).as("%.2fx shift, steps at %.3f", shift, stepRatio).isNotNull();
        assertThat(at + 1).as("%.2fx shift, steps at %.3f: steps to its end", shift, stepRatio).isEqualTo(steps);
        assertThat(end.ratio()).isCloseTo(stepRatio, org.assertj.core.data.Offset.offset(0.01));
        assertThat(w.watchingEnd()).isFalse();
    }

    @Test
    void aShiftThatEndsInsideABlockIsUndoneBeforeTheBlockCompletes() {
        // a 1.5x throttle re-anchored on as a regression ends 130 steps into the watch, and 81 steps later a second one
        // begins: its end fills no block of its own, and three blocks of steps back at the level before came too late
        // (validation-style faults2-8001, v-dec-7b-b: all 1,034 slowed steps of the second throttle unflagged)
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        w.watchEnd(1.5, 2_000);
        SplittableRandom rng = new SplittableRandom(3);
        for (int i = 0; i < 130; i++) {
            assertThat(w.observe(rng.nextGaussian() * 0.03, i * STEP_NS, true, 0)).isNull();
        }
        DriftWatch.Alarm end = null;
        int at = 130;
        for (; at < 211 && end == null; at++) {
            end = w.observe(-Math.log(1.5) + rng.nextGaussian() * 0.03, at * STEP_NS, true, 0);
        }
        assertThat(end).isNotNull();
        // the block under way began at step 100 with 30 steps at the model: its median turned on the 31st step below
        assertThat(at - 1).isEqualTo(160);
        assertThat(end.sinceNs()).isEqualTo(100 * STEP_NS);
        // by the block's median, the highest of its steps below the model, where half the block still ran at it
        assertThat(end.ratio()).isBetween(1 / 1.5, 1 / 1.5 + 0.05);
        assertThat(w.watchingEnd()).isFalse();
    }

    @Test
    void aShiftThatStandsOrEndsAfterItsWatchIsNotUndone() {
        DriftWatch stands = new DriftWatch(DriftWatch.Settings.defaults());
        stands.watchEnd(1.3, 2_000);
        SplittableRandom rng = new SplittableRandom(4);
        for (int i = 0; i < 3_000; i++) { // the re-anchored model is right: steps near it
            assertThat(stands.observe(rng.nextGaussian() * 0.03, i * STEP_NS, true, 0)).isNull();
        }
        DriftWatch late = new DriftWatch(DriftWatch.Settings.defaults());
        late.watchEnd(1.3, 500);
        for (int i = 0; i < 500; i++) {
            assertThat(late.observe(0, i * STEP_NS, true, 0)).isNull();
        }
        assertThat(late.watchingEnd()).isFalse();
        for (int i = 500; i < 1_000; i++) { // an improvement long after the alarm is no undoing of it
            assertThat(late.observe(-Math.log(1.3), i * STEP_NS, true, 0)).isNull();
        }
    }

    @Test
    void aWindowWhoseNewestBlockStandsApartFromItRaisesNoAlarmUntilItAgrees() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        int i = 0;
        for (; i < 200; i++) {
            assertThat(w.observe(0, i * STEP_NS, true, 0)).isNull();
        }
        for (; i < 1_400; i++) { // a long 1.6x episode: 12 blocks
            assertThat(w.observe(Math.log(1.6), i * STEP_NS, true, 0)).isNull();
        }
        for (; i < 1_500; i++) { // a 2x episode on top of its end: the window is full of elevated blocks, the newest apart
            assertThat(w.observe(Math.log(2.0), i * STEP_NS, true, 0)).as("step %d", i).isNull();
        }
        DriftWatch.Alarm alarm = null;
        for (; i < 1_700 && alarm == null; i++) { // back at the window's level: it stands now
            alarm = w.observe(Math.log(1.6), i * STEP_NS, true, 0);
        }
        assertThat(alarm).isNotNull();
        assertThat(alarm.ratio()).isCloseTo(1.6, org.assertj.core.data.Offset.offset(0.02));
    }

    @Test
    void twoEpisodesWithAHealthyBlockBetweenThemAreNoSustainedShift() {
        // validation gen.py 6204's v-mix-70b-b: a 1,120-step throttle, a healthy spell, a contention; 13 of 15 blocks elevated
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        double[][] phases = {{300, 0}, {1_400, Math.log(1.7)}, {1_500, -0.02}, {1_700, Math.log(1.8)}}; // {until step, log ratio}
        int i = 0;
        for (double[] phase : phases) {
            for (; i < phase[0]; i++) {
                assertThat(w.observe(phase[1], i * STEP_NS, true, 0)).as("step %d", i).isNull();
            }
        }
        // the same blocks without the healthy spell are one shift
        DriftWatch unbroken = new DriftWatch(DriftWatch.Settings.defaults());
        DriftWatch.Alarm alarm = null;
        for (int j = 0; j < 1_700 && alarm == null; j++) {
            alarm = unbroken.observe(j < 300 ? 0 : j < 1_500 ? Math.log(1.7) : Math.log(1.8), j * STEP_NS, true, 0);
        }
        assertThat(alarm).isNotNull();
    }

    @Test
    void aSlowdownOfTwelveHundredStepsIsNoSustainedShift() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        for (int i = 0; i < 10_000; i++) {
            boolean throttled = i >= 3_000 && i < 4_200;
            assertThat(w.observe(throttled ? Math.log(1.6) : 0.01, i * STEP_NS, true, 0)).isNull();
        }
    }

    @Test
    void theOnsetIsReadAgainstTheAnchorWhileTheLevelFollowsTheShift() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        SplittableRandom rng = new SplittableRandom(2);
        double shift = Math.log(1.25);
        double creep = Math.log(1.045);
        double rise = 0;
        for (int i = 0; i < 3_000; i++) {
            if (i >= 2_070) {
                rise += (creep + shift - rise) / 150; // the level follows the shift over a few hundred steps
            } else if (i >= 1_000) {
                rise = Math.min(creep, creep * (i - 1_000) / 1_000); // and before it crept up 4.5%, as a healthy instance's does
            }
            double residual = (i >= 2_070 ? creep + shift - rise : 0) + rng.nextGaussian() * 0.03;
            assertThat(w.observe(residual, i * STEP_NS, true, rise)).isNull();
        }
        DriftWatch.Onset onset = w.onset();
        assertThat(onset).isNotNull();
        assertThat(onset.sinceNs()).as("the block the shift began in (at 2,070): not the creep before it, though its last blocks' residuals are near zero")
                .isEqualTo(2_000 * STEP_NS);
        assertThat(Math.exp(onset.shiftLog())).isBetween(1.23 * 1.045, 1.27 * 1.045);
        assertThat(w.alarmOnset()).as("no alarm").isNull();
    }

    @Test
    void anAlarmKeepsTheOnsetOfTheShiftItForgets() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        DriftWatch.Alarm alarm = null;
        int i = 0;
        for (; alarm == null; i++) {
            alarm = w.observe(i >= 1_070 ? Math.log(1.2) : 0, i * STEP_NS, true, i >= 1_070 ? Math.log(1.1) : 0);
        }
        assertThat(alarm.ratio()).as("against the anchor: the residual and what the level has followed").isCloseTo(1.32, org.assertj.core.data.Offset.offset(0.01));
        assertThat(w.alarmOnset().sinceNs()).as("the block it began in (at 1,070)").isEqualTo(1_000 * STEP_NS);
        assertThat(Math.exp(w.alarmOnset().shiftLog())).as("against the anchor").isCloseTo(1.32, org.assertj.core.data.Offset.offset(0.01));
        assertThat(w.onset()).as("the window was forgotten").isNull();
        w.observe(0, i * STEP_NS, true, 0);
        assertThat(w.alarmOnset()).as("only for the observe that alarmed").isNull();
    }

    @Test
    void aShiftTheLevelHasMostlyFollowedIsStillSustained() {
        // the level took 1.1x of a 1.155x regression: its steps run 1.05x over the model, under the elevated ratio and the
        // minimum shift, and only read against the anchor do its blocks stand above it
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        DriftWatch.Alarm alarm = null;
        int i = 0;
        for (; alarm == null && i < 10_000; i++) {
            alarm = w.observe(i >= 2_000 ? Math.log(1.05) : 0, i * STEP_NS, true, i >= 2_000 ? Math.log(1.1) : 0);
        }
        assertThat(alarm).isNotNull();
        assertThat(alarm.ratio()).isCloseTo(1.155, org.assertj.core.data.Offset.offset(0.01));
        assertThat(alarm.sinceNs()).isEqualTo(2_000 * STEP_NS);
        assertThat(i).as("once 13 of the window's 15 blocks stand above the anchor").isEqualTo(2_000 + 1_300);
    }

    @Test
    void stateRoundTripsAndSettingsAreValidated() {
        DriftWatch a = new DriftWatch(DriftWatch.Settings.defaults());
        for (int i = 0; i < 1_234; i++) {
            a.observe(Math.log(1.25), i, true, 0.01 * (i % 7));
        }
        DriftWatch b = new DriftWatch(DriftWatch.Settings.defaults());
        b.restore(a.currentBlock(), a.currentTailMask(), a.currentStartNs(), a.blockElevated(), a.blockMedian(), a.blockStarts(), a.blockLevelRise());
        assertThat(b.blockLevelRise()).isEqualTo(a.blockLevelRise()).contains(6);
        for (int i = 1_234; i < 3_000; i++) {
            DriftWatch.Alarm x = a.observe(Math.log(1.25), i, true, 0.02);
            DriftWatch.Alarm y = b.observe(Math.log(1.25), i, true, 0.02);
            assertThat(y).isEqualTo(x);
            assertThat(b.onset()).isEqualTo(a.onset());
            assertThat(b.alarmOnset()).isEqualTo(a.alarmOnset());
        }
        assertThatThrownBy(() -> new DriftWatch.Settings(5, 15, 1.1, 0.9, 1.12)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DriftWatch.Settings(100, 15, 1.0, 0.9, 1.12)).isInstanceOf(IllegalArgumentException.class);
    }
}
