package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

import io.stepline.roofline.model.Assessment;

class ShiftReportsTest {
    private static final DriftWatch.Alarm ALARM = new DriftWatch.Alarm(1.3, 5_000L);

    @Test
    void aFurtherAlarmWhileTheModelFollowsAReportedShiftIsNotReported() {
        ShiftReports r = new ShiftReports();
        Assessment.Drift first = r.report(10_000, ALARM, null, 7);
        assertThat(first).isNotNull();
        assertThat(first.ratio()).isEqualTo(1.3);
        assertThat(first.sinceNs()).isEqualTo(5_000L);
        assertThat(first.referenceVersion()).isEqualTo(7);
        assertThat(r.report(10_000 + ShiftReports.FOLLOW_STEPS - 1, ALARM, null, 7)).isNull();
        // a followed alarm does not move the horizon: the next one past it is a shift of its own
        assertThat(r.report(10_000 + ShiftReports.FOLLOW_STEPS, ALARM, null, 7)).isNotNull();
        assertThat(r.reported()).isEqualTo(2);
    }

    @Test
    void aShiftLeftStandingIsReportedOnceHoweverLongItsAlarmsGoOn() {
        ShiftReports r = new ShiftReports();
        assertThat(r.reportStanding(1_000, ALARM, null, 1)).isNotNull();
        long step = 1_000;
        for (int i = 0; i < 5; i++) {
            step += ShiftReports.FOLLOW_STEPS - 1; // each alarm comes within the horizon the last one set
            assertThat(r.reportStanding(step, ALARM, null, 1)).isNull();
        }
        assertThat(r.reported()).isEqualTo(1);
        assertThat(r.reportedAtStep()).isEqualTo(step);
        assertThat(r.following(step + ShiftReports.FOLLOW_STEPS - 1)).isTrue();
        assertThat(r.following(step + ShiftReports.FOLLOW_STEPS)).isFalse();
    }

    @Test
    void aShiftLeftStandingThatHasEndedHoldsBackNoNewReportWhileAFollowedOneDoes() {
        ShiftReports r = new ShiftReports();
        assertThat(r.reportStanding(1_000, ALARM, null, 1)).isNotNull();
        assertThat(r.standing()).isTrue();
        r.standingEnded(); // its steps are back at the model
        assertThat(r.following(1_500)).isFalse();
        assertThat(r.report(1_500, ALARM, null, 1)).as("a new shift, 500 steps after the standing one's report").isNotNull();
        assertThat(r.standing()).isFalse();
        r.standingEnded(); // back at the model because the model followed the shift: still within its horizon
        assertThat(r.report(1_600, ALARM, null, 1)).isNull();
        assertThat(r.reported()).isEqualTo(2);
    }

    @Test
    void aShiftReAnchoredOnAfterOneLeftStandingIsReportedWithinTheStandingOnesHorizon() {
        ShiftReports r = new ShiftReports();
        assertThat(r.reportStanding(1_000, ALARM, null, 1)).isNotNull();
        // its steps never came back to the model (a regression began as it ended): still standing
        assertThat(r.following(1_400)).isTrue();
        assertThat(r.report(1_400, new DriftWatch.Alarm(1.22, 9_000L), null, 1)).as("another shift, not the standing one followed")
                .isNotNull();
        assertThat(r.standing()).isFalse();
        assertThat(r.report(1_500, ALARM, null, 1)).as("and that one is followed as any re-anchored report").isNull();
        assertThat(r.reported()).isEqualTo(2);
    }

    @Test
    void aReAnchoringUndoneEndsTheReportsHorizon() {
        ShiftReports r = new ShiftReports();
        assertThat(r.report(1_000, ALARM, null, 1)).isNotNull();
        assertThat(r.report(1_300, ALARM, null, 1)).as("followed").isNull();
        r.shiftUndone(); // the shift ended: a long episode, not a regression
        assertThat(r.following(1_400)).isFalse();
        assertThat(r.report(1_400, ALARM, null, 1)).as("a new shift 400 steps after the undone one's report").isNotNull();
        assertThat(r.reported()).isEqualTo(2);
    }

    @Test
    void aReportNamesTheOnsetTheDriftWindowShowedWhereThereWasOne() {
        ShiftReports r = new ShiftReports();
        Assessment.Drift d = r.report(50, ALARM, new DriftWatch.Onset(3_000L, Math.log(1.25)), 2);
        assertThat(d.ratio()).isCloseTo(1.25, within(1e-12));
        assertThat(d.sinceNs()).isEqualTo(3_000L);
    }

    @Test
    void aRestoredCopyFollowsTheSameReport() {
        ShiftReports r = new ShiftReports();
        assertThat(new ShiftReports().following(0)).isFalse();
        r.report(400, ALARM, null, 1);
        ShiftReports copy = new ShiftReports();
        copy.restore(r.reported(), r.reportedAtStep(), r.standing());
        assertThat(copy.reported()).isEqualTo(1);
        assertThat(copy.report(401, ALARM, null, 1)).isNull();
        assertThat(copy.report(400 + ShiftReports.FOLLOW_STEPS, ALARM, null, 1)).isNotNull();
        r.reportStanding(5_000, ALARM, null, 1);
        ShiftReports standing = new ShiftReports();
        standing.restore(r.reported(), r.reportedAtStep(), r.standing());
        standing.standingEnded();
        assertThat(standing.report(5_001, ALARM, null, 1)).as("the standing mark is part of the stored state").isNotNull();
    }
}
