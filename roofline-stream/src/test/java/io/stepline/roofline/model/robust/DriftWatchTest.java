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
            alarm = w.observe(shift + rng.nextGaussian() * 0.03, i * STEP_NS, true);
            at = i;
        }
        assertThat(alarm).isNotNull();
        assertThat(at).as("within 2,000 steps of the start").isBetween(2_050, 4_050);
        assertThat(alarm.ratio()).isBetween(1.27, 1.33);
        assertThat(alarm.sinceNs()).isBetween(2_000 * STEP_NS, 2_100 * STEP_NS);
        for (int i = at + 1; i < at + 1_400; i++) {
            assertThat(w.observe(Math.log(1.3), i * STEP_NS, true)).as("the window starts again after an alarm").isNull();
        }
    }

    @Test
    void aSlowdownOfTwelveHundredStepsIsNoSustainedShift() {
        DriftWatch w = new DriftWatch(DriftWatch.Settings.defaults());
        for (int i = 0; i < 10_000; i++) {
            boolean throttled = i >= 3_000 && i < 4_200;
            assertThat(w.observe(throttled ? Math.log(1.6) : 0.01, i * STEP_NS, true)).isNull();
        }
    }

    @Test
    void stateRoundTripsAndSettingsAreValidated() {
        DriftWatch a = new DriftWatch(DriftWatch.Settings.defaults());
        for (int i = 0; i < 1_234; i++) {
            a.observe(Math.log(1.25), i, true);
        }
        DriftWatch b = new DriftWatch(DriftWatch.Settings.defaults());
        b.restore(a.currentBlock(), a.currentTailMask(), a.currentStartNs(), a.blockElevated(), a.blockMedian(), a.blockStarts());
        for (int i = 1_234; i < 3_000; i++) {
            DriftWatch.Alarm x = a.observe(Math.log(1.25), i, true);
            DriftWatch.Alarm y = b.observe(Math.log(1.25), i, true);
            assertThat(y).isEqualTo(x);
        }
        assertThatThrownBy(() -> new DriftWatch.Settings(5, 15, 1.1, 0.9, 1.12)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DriftWatch.Settings(100, 15, 1.0, 0.9, 1.12)).isInstanceOf(IllegalArgumentException.class);
    }
}
