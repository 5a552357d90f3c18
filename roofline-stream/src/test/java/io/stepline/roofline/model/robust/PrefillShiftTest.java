package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateFit;
import io.stepline.events.RooflineStateHeader;

class PrefillShiftTest {
    private static final long STEP_NS = 10_000_000L;

    /** What {@link PrefillShift#observe} returned for each step: its prefill-heavy steps ({@code prefill}) run {@code shift} x the model, with 2% noise fixed by the step. */
    private static List<DriftWatch.Alarm> feed(PrefillShift w, int from, int to, IntPredicate prefill, java.util.function.IntToDoubleFunction shift) {
        List<DriftWatch.Alarm> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            double log = prefill.test(i) ? Math.log(shift.applyAsDouble(i)) + 0.02 * new SplittableRandom(i).nextGaussian() : Double.NaN;
            out.add(w.observe(log, i * STEP_NS));
        }
        return out;
    }

    private static int firstAlarm(List<DriftWatch.Alarm> alarms) {
        for (int i = 0; i < alarms.size(); i++) {
            if (alarms.get(i) != null) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void aShiftOfThePrefillHeavyStepsIsFoundOnceNearlyEveryBlockStandsAboveTheModel() {
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        List<DriftWatch.Alarm> alarms = feed(w, 0, 6_000, i -> i % 5 == 0, i -> i >= 2_000 ? 1.25 : 1);
        int at = firstAlarm(alarms);
        assertThat(at).as("within 2,000 steps of the shift").isBetween(2_000, 4_000);
        assertThat(alarms.get(at).ratio()).isBetween(1.2, 1.3);
        assertThat(alarms.get(at).sinceNs()).as("from the block it began in").isBetween(1_900 * STEP_NS, 2_000 * STEP_NS);
        // the window is forgotten: not re-anchored (no model here), the shift must fill it again to be found again
        assertThat(firstAlarm(alarms.subList(at + 1, alarms.size()))).as("steps to the next alarm").isGreaterThanOrEqualTo(1_499);
    }

    @Test
    void aShiftOfThePrefillHeavyStepsStandingWhenTheInputEndsIsReadWithItsSizeAndStart() {
        // 800 steps of a 1.25x shift before the end: too few to fill the window, and no alarm
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        assertThat(firstAlarm(feed(w, 0, 3_000, i -> i % 5 == 0, i -> i >= 2_200 ? 1.25 : 1))).isEqualTo(-1);
        DriftWatch.Alarm end = w.standingAtEnd(6);
        assertThat(end).isNotNull();
        assertThat(end.ratio()).isBetween(1.2, 1.3);
        assertThat(end.sinceNs()).as("from the block it began in").isEqualTo(2_200 * STEP_NS);
        assertThat(w.standingAtEnd(9)).as("fewer blocks than asked for").isNull();
        assertThat(w.standingAtEnd(6)).as("asked again, the same").isEqualTo(end);

        PrefillShift healthy = new PrefillShift(DriftWatch.Settings.defaults());
        feed(healthy, 0, 3_000, i -> i % 5 == 0, i -> 1);
        assertThat(healthy.standingAtEnd(6)).isNull();
        PrefillShift ended = new PrefillShift(DriftWatch.Settings.defaults());
        feed(ended, 0, 3_050, i -> i % 5 == 0, i -> i >= 2_200 && i < 3_000 ? 1.25 : 1);
        assertThat(ended.standingAtEnd(6)).as("back at the model in the block under way").isNull();
        PrefillShift decodeOnly = new PrefillShift(DriftWatch.Settings.defaults());
        feed(decodeOnly, 0, 3_000, i -> false, i -> 1.25);
        assertThat(decodeOnly.standingAtEnd(6)).as("no prefill-heavy steps").isNull();
        PrefillShift watched = new PrefillShift(DriftWatch.Settings.defaults());
        feed(watched, 0, 3_000, i -> i % 5 == 0, i -> i >= 2_200 ? 1.25 : 1);
        watched.watchEnd(1.25, 2_000);
        assertThat(watched.standingAtEnd(6)).as("a re-anchored shift watched for its end").isNull();
    }

    @Test
    void aShiftStandingWhenTheInputEndsIsReadThroughItsBlocksThatStandLessThanAnAlarmsMust() {
        // a 1.2x shift from step 2,100, two of whose blocks read only 1.05x (the batch level's error in the decode part
        // taken out of each step): under an alarm's block test, but above the model
        java.util.function.IntToDoubleFunction shift = i -> i < 2_100 ? 1 : i / 100 == 27 || i / 100 == 29 ? 1.05 : 1.2;
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        assertThat(firstAlarm(feed(w, 0, 3_000, i -> i % 5 == 0, shift))).isEqualTo(-1);
        DriftWatch.Alarm end = w.standingAtEnd(6);
        assertThat(end).as("the run goes on through the blocks at 1.05x").isNotNull();
        assertThat(end.ratio()).isBetween(1.17, 1.23);
        assertThat(end.sinceNs()).as("from the block it began in").isEqualTo(2_100 * STEP_NS);

        // blocks back at the model end the run; and a run whose blocks mostly stand just above it is no shift
        PrefillShift back = new PrefillShift(DriftWatch.Settings.defaults());
        feed(back, 0, 3_000, i -> i % 5 == 0, i -> i < 2_100 ? 1 : i / 100 == 27 ? 1 : 1.2);
        assertThat(back.standingAtEnd(6)).as("two blocks since the one back at the model").isNull();
        PrefillShift slight = new PrefillShift(DriftWatch.Settings.defaults());
        feed(slight, 0, 3_000, i -> i % 5 == 0, i -> i < 2_100 ? 1 : i / 100 % 3 == 0 ? 1.2 : 1.05);
        assertThat(slight.standingAtEnd(6)).as("the run's median shift under the minimum ratio").isNull();
    }

    @Test
    void itCountsTheTrailingBlocksWhosePrefillHeavyStepsStandAboveTheModel() {
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        feed(w, 0, 2_000, i -> i % 5 == 0, i -> 1);
        assertThat(w.standingBlocks()).as("healthy").isZero();
        feed(w, 2_000, 2_350, i -> i % 5 == 0, i -> 1.2);
        assertThat(w.standingBlocks()).as("three full blocks of a 1.2x shift, the fourth under way").isEqualTo(3);
        feed(w, 2_350, 2_600, i -> i % 5 == 0 && (i < 2_400 || i >= 2_500), i -> 1.2);
        assertThat(w.standingBlocks()).as("a block without prefill-heavy steps passed over").isEqualTo(5);
        feed(w, 2_600, 2_700, i -> i % 5 == 0, i -> 1);
        assertThat(w.standingBlocks()).as("back at the model: the run is broken").isZero();
    }

    @Test
    void aTwelveHundredStepSlowdownIsNoShift() {
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        assertThat(firstAlarm(feed(w, 0, 6_000, i -> i % 5 == 0, i -> i >= 2_000 && i < 3_200 ? 1.6 : 1))).isEqualTo(-1);
    }

    @Test
    void prefillHeavyStepsCrowdedIntoASlowdownsBlocksAreNoShift() {
        // the prompts' steps before a 900-step slowdown fell in cells the model did not know (not counted): the
        // window's counted steps are nearly all the slowdown's, its blocks are not
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        IntPredicate prefill = i -> i % 5 == 0 && (i < 1_000 || i >= 2_000 || i % 50 == 0);
        assertThat(firstAlarm(feed(w, 0, 2_900, prefill, i -> i >= 2_000 ? 1.6 : 1))).isEqualTo(-1);
    }

    @Test
    void aDecodeOnlyInstanceNeverShifts() {
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        assertThat(firstAlarm(feed(w, 0, 5_000, i -> false, i -> 1.5))).isEqualTo(-1);
    }

    @Test
    void aShiftThatEndsWhileWatchedIsUndone() {
        PrefillShift w = new PrefillShift(DriftWatch.Settings.defaults());
        List<DriftWatch.Alarm> alarms = feed(w, 0, 4_000, i -> i % 5 == 0, i -> i >= 1_000 ? 1.6 : 1);
        DriftWatch.Alarm shift = alarms.get(firstAlarm(alarms));
        w.watchEnd(shift.ratio(), 2_000);
        assertThat(w.watchingEnd()).isTrue();
        // re-anchored on it, the model expects 1.6x: the steps back at 1x run 1/1.6 of it
        List<DriftWatch.Alarm> after = feed(w, 4_000, 5_000, i -> i % 5 == 0, i -> 1 / shift.ratio());
        DriftWatch.Alarm end = after.get(firstAlarm(after));
        assertThat(end.ratio()).as("the whole shift given back").isCloseTo(1 / shift.ratio(), org.assertj.core.data.Offset.offset(0.02));
        assertThat(w.watchingEnd()).isFalse();
    }

    @Test
    void aRestoredWatchAlarmsWhereAnUninterruptedOneDoes() {
        PrefillShift uninterrupted = new PrefillShift(DriftWatch.Settings.defaults());
        int expected = firstAlarm(feed(uninterrupted, 0, 5_000, i -> i % 3 == 0, i -> i >= 1_500 ? 1.3 : 1));
        assertThat(expected).isPositive();
        PrefillShift first = new PrefillShift(DriftWatch.Settings.defaults());
        feed(first, 0, 2_345, i -> i % 3 == 0, i -> i >= 1_500 ? 1.3 : 1);
        RooflineStateHeader h = new RooflineStateHeader();
        first.saveTo(h);
        RooflineStateFit.Builder f = RooflineStateFit.newBuilder();
        first.saveTo(f);
        PrefillShift restored = new PrefillShift(DriftWatch.Settings.defaults());
        restored.restore(h);
        restored.restoreBlocks(f.getPrefillBlockSteps(), f.getPrefillBlockElevated(), f.getPrefillBlockMedian(), f.getPrefillBlockStartNs(),
                f.getPrefillWatchBlocks(), f.getPrefillWatchShiftLog());
        int got = firstAlarm(feed(restored, 2_345, 5_000, i -> i % 3 == 0, i -> i >= 1_500 ? 1.3 : 1));
        assertThat(got + 2_345).isEqualTo(expected);
    }
}
