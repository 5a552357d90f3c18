package io.stepline.roofline.model.robust;

import io.stepline.roofline.model.Assessment;

/**
 * The sustained regressions the robust roofline reports: one report for a shift, however many alarms the model raises
 * while it follows it or while it stands ({@link #FOLLOW_STEPS}), and how many were reported.
 */
final class ShiftReports {
    /**
     * Steps after a reported sustained regression during which a further alarm is the model still
     * following it, re-anchored without a report: the level follows a regression that slows some steps
     * more than others over a thousand steps or more, and rose a second time past its threshold 1,231
     * steps after the first alarm on simulator seed 1 (two incidents for one kernel regression). The drift watch's own horizon: it reports a shift within 2,000 steps.
     */
    static final int FOLLOW_STEPS = 2_000;

    /** Sustained regressions reported. */
    private long reported;
    /** The instance's step at the last reported sustained regression, or at the last alarm of a shift left standing; -1: none. */
    private long reportedAtStep = -1;
    /** The last report was of a shift left standing. */
    private boolean standing;

    /** Within {@link #FOLLOW_STEPS} of the last report: a further alarm is the model still following it. */
    boolean following(long step) {
        return reportedAtStep >= 0 && step - reportedAtStep < FOLLOW_STEPS;
    }

    /**
     * Reports an alarm raised at {@code step} (a shift re-anchored on), unless it comes within {@link #FOLLOW_STEPS} of
     * the last report (null), which was not of a shift left standing. A shift re-anchored on after one left standing is
     * another shift, not the standing one followed: that one is fault-sized and never re-anchored on. A 1.55x throttle
     * left standing ended 112 steps before a 1.22x regression began, too soon for its steps to be seen back at the model
     * ({@link #standingEnded}), and the regression's alarm was held back as the throttle's (validation-style
     * faults2-7007, v-dec-70b-a; docs/BENCHMARKS.md, stop 59).
     */
    Assessment.Drift report(long step, DriftWatch.Alarm alarm, DriftWatch.Onset onset, long referenceVersion) {
        if (following(step) && !standing) {
            return null;
        }
        reportedAtStep = step;
        standing = false;
        return drift(alarm, onset, referenceVersion);
    }

    /**
     * Reports an alarm of a shift left standing, unless it comes within {@link #FOLLOW_STEPS} of the last report (null):
     * a shift that goes on standing raises the alarm again with every window it fills, and each such alarm extends the
     * report's horizon instead of being reported again.
     */
    Assessment.Drift reportStanding(long step, DriftWatch.Alarm alarm, DriftWatch.Onset onset, long referenceVersion) {
        boolean follows = following(step);
        reportedAtStep = step;
        standing = true;
        return follows ? null : drift(alarm, onset, referenceVersion);
    }

    /**
     * The steps are back at the model: a shift left standing has ended, and an alarm after this is a new shift, reported
     * whenever it comes. A 1.52x throttle left standing ended 630 steps before a 1.45x regression began, whose alarm came
     * within {@link #FOLLOW_STEPS} of the throttle's, was taken for the model still following it, re-anchored on and never
     * reported (validation-style faults2-7305, v-pre-70b-a; over 266 validation-style sets 12 regressions reported only
     * by a throttle's report before they began, 1 now; docs/BENCHMARKS.md, stop 56). Not after a re-anchored report:
     * there the steps are back at the model because the model followed the shift.
     */
    void standingEnded() {
        if (standing) {
            standing = false;
            reportedAtStep = -1;
        }
    }

    /**
     * The shift the last report re-anchored on was found to have ended and the re-anchoring undone: an alarm after
     * this is a new shift, reported whenever it comes.
     */
    void shiftUndone() {
        standing = false;
        reportedAtStep = -1;
    }

    /** The alarm as reported: from its onset against the level's anchor where the window showed one. */
    private Assessment.Drift drift(DriftWatch.Alarm alarm, DriftWatch.Onset onset, long referenceVersion) {
        reported++;
        return onset == null ? new Assessment.Drift(alarm.ratio(), alarm.sinceNs(), referenceVersion)
                : new Assessment.Drift(Math.exp(onset.shiftLog()), onset.sinceNs(), referenceVersion);
    }

    long reported() {
        return reported;
    }

    long reportedAtStep() {
        return reportedAtStep;
    }

    boolean standing() {
        return standing;
    }

    void restore(long reported, long reportedAtStep, boolean standing) {
        this.reported = reported;
        this.reportedAtStep = reportedAtStep;
        this.standing = standing;
    }
}
