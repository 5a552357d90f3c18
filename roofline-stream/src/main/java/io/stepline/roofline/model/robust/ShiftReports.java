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

    /** Within {@link #FOLLOW_STEPS} of the last report: a further alarm is the model still following it. */
    boolean following(long step) {
        return reportedAtStep >= 0 && step - reportedAtStep < FOLLOW_STEPS;
    }

    /** Reports an alarm raised at {@code step}, unless it comes within {@link #FOLLOW_STEPS} of the last report (null). */
    Assessment.Drift report(long step, DriftWatch.Alarm alarm, DriftWatch.Onset onset, long referenceVersion) {
        if (following(step)) {
            return null;
        }
        reportedAtStep = step;
        return drift(alarm, onset, referenceVersion);
    }

    /**
     * Reports an alarm of a shift left standing, unless it comes within {@link #FOLLOW_STEPS} of the last report (null):
     * a shift that goes on standing raises the alarm again with every window it fills, and each such alarm extends the
     * report's horizon instead of being reported again.
     */
    Assessment.Drift reportStanding(long step, DriftWatch.Alarm alarm, DriftWatch.Onset onset, long referenceVersion) {
        boolean standing = following(step);
        reportedAtStep = step;
        return standing ? null : drift(alarm, onset, referenceVersion);
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

    void restore(long reported, long reportedAtStep) {
        this.reported = reported;
        this.reportedAtStep = reportedAtStep;
    }
}
