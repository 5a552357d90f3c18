package io.stepline.roofline.model.robust;

import io.stepline.events.RooflineStateHeader;

/**
 * What the robust roofline's last judged steps said, in the terms its rules read:
 * <ul>
 * <li>the share of recent steps running 10% above the model: high while an episode (a throttle, a regression) is
 *     under way, when neither the tail nor new cells may learn from what they see, until a run of known steps near the
 *     model ends it;</li>
 * <li>the burst of reported steps and the slowdown they ran at: in a burst, work the model does not know is judged
 *     by the burst, and work beyond the training is held back, then learned net of it;</li>
 * <li>the last judged steps in work the model knows: slow there (new work right after is judged by the burst's
 *     ratio) or healthy there (a burst in new work is the fit's error).</li>
 * </ul>
 * The robust roofline asks; this class only counts, and keeps its counts in the state header.
 */
final class RecentVerdicts {
    /** Weight of one step in the running share of elevated steps (a memory of ~50 steps). */
    static final double ELEVATED_ALPHA = 1.0 / 50;
    static final double LOG_ELEVATED = Math.log(1.1);
    /** Above this share of elevated steps an episode is under way: new cells and the tail do not learn. */
    static final double MAX_CALM_ELEVATED_SHARE = 0.3;
    /**
     * After this many judged steps in a row outside the cells the model knows, the instance has moved to new
     * work, and its steps there that run near the model let the elevated share fall. Counted in known cells only,
     * the share stood still when an episode drove the load into new cells; those cells learn only when the share
     * is calm, so they never learned, and the model extrapolated for thousands of steps after the episode had
     * ended (validation-style traces with long throttles and short runs). New work's steps only ever lower the
     * share: the fit's error there is wide, and counted both ways they kept a young instance's new cells from
     * learning (validation seed 32's log instance: false positives 0.11% -> 0.23%), counted above the tightest
     * bound they let a 1.22x regression's new cells learn it (seed 71: the regression not found). Counting every
     * extrapolated step delayed a regression's alarm past 2,000 steps (ModelsTest). docs/BENCHMARKS.md has the
     * variants compared.
     */
    static final int NEW_WORK_RUN = 8;
    /**
     * After this many judged steps in a row in known cells near the model (under {@link #LOG_ELEVATED}) an episode is
     * over, whatever the elevated share says: the share is put at {@link #SHARE_AFTER_HEALTHY_RUN}, under the calm line.
     * The share counts known steps only, and when an episode drove the load into work the model did not know, few known
     * steps came to lower it: a throttle during which a decode instance's batches fell from ~280 to ~100 requests ended
     * at step 3,315, its known steps after ran at 0.92-1.03x, yet the share stayed above the line until step 4,035; the
     * new cells, where the fit extrapolated 1.3-1.5x low, learned nothing meanwhile, and 82 healthy steps were flagged
     * (validation-style fleet2-5711, w-dec-70b-bs; none so). Under a 1.2x regression with 10% noise a known step runs
     * under 1.1x one time in five, eight in a row about twice in a million.
     * <p>
     * Near is within the model's learning margin where that is wider than 1.1x ({@link #judged}): on a noisy instance
     * (2.5 sigma of its spread above log 1.1) a healthy known step ran over 1.1x one time in six, more right after an
     * episode, eight in a row under it came too seldom, and episodes outlived their faults. After a contention on a
     * decode instance with 7.5% spread the share stayed over the line for 100-150 steps after each episode; the new
     * cells the load moved into, where the fit erred 1.17x low, learned nothing, and the instance had 53 healthy steps
     * flagged, 8 now (validation-style noisy-8804, v-dec-7b-b; docs/BENCHMARKS.md, stop 65). The price: under a 1.2x
     * regression with 10% spread (a margin of 1.28x) eight known steps in a row within it come about one time in ten,
     * so such an episode ends early and new cells may learn the regression; the drift watch, which reads known steps,
     * still reports it (every sustained regression in the sets measured was).
     */
    static final int EPISODE_OVER_RUN = 8;
    /** The elevated share once {@link #EPISODE_OVER_RUN} healthy known steps came in a row: just under the calm line. */
    static final double SHARE_AFTER_HEALTHY_RUN = 0.29;
    /**
     * A step in a cell without an offset of its own is also flagged above {@link RobustRoofline#BURST_NEW_WORK_RATIO}
     * when the last this many judged steps in known cells were all reported, at most {@link #SLOW_KNOWN_WITHIN} judged
     * steps ago: the device was slow where the model knows the cost. A throttle on a young instance sent its load back
     * and forth between known cells (every step flagged) and small batches it had never run, where the fit erred 20-30%
     * high; there the throttle read 1.15-1.3x, the reports split, no burst lasted, and the steps went unflagged
     * (validation seed 991's and validation-style set noisy 2006's v-dec-70b-a: 209 of 626 and 217 of 824 of their 1.5x
     * steps missed; 0.966 -> 0.978 and 0.951 -> 0.969 set recall with this rule). One reported known step was too
     * little evidence: a host stall's or a contention's last step, followed by new work the fit erred high in, gave
     * false positives (42 validation-style sets: 0.0254% -> 0.0271% with one, 0.0254% with three). Not for producers
     * without the KV context: on the log instance it moved nothing but five false positives after a contention
     * (docs/BENCHMARKS.md, stop 37).
     */
    static final int SLOW_KNOWN_FLAGS = 3;
    /** Judged steps since the last step in a known cell within which {@link #SLOW_KNOWN_FLAGS} still speak for new work. */
    static final int SLOW_KNOWN_WITHIN = 64;
    /**
     * Work beyond the training that comes in a burst is not learned for this many steps (the burst may end first: a
     * sampled instance's kernel slowdown ended two steps into such work, and learned at once net of the slowdown, its
     * healthy steps after were flagged: 161 false positives on validation-style set 981 at 3,000 steps), then learned
     * net of the burst's slowdown: learned as it ran, a throttle's steps taught the model that work at 1.6x its cost,
     * and the 450 steps of it after went unflagged (set 995 at 4,000 steps, v-dec-7b-b; set recall 0.904 -> 0.987).
     */
    static final int BURST_HOLD = 64;
    /** The share of the burst's log slowdown at or above which a step in new work keeps the burst going ({@link #verdict}). */
    static final double NEW_WORK_BURST_SHARE = 0.5;
    /**
     * Judged steps since the last one reported over its own bound within which a step of new work in a burst is
     * flagged over {@link RobustRoofline#BURST_NEW_WORK_RATIO} whatever the burst's slowdown; after them only a step
     * nearer that slowdown than healthy work is ({@link #nearBurstLog}). A burst fed only by new work flagged as its own
     * speaks for nothing but itself: when a young instance's throttle, which ran all in new work at 2.0-2.6x, ended
     * there, the healthy steps read 1.2-1.35x against a fit erring low, and flagged over 1.2x they kept the burst going
     * for 800 steps (validation-style fleet2-9001, w-dec-70b-bs: 123 healthy steps flagged). Only half the burst's
     * slowdown at all times cost recall where a contention's decode steps read 1.2-1.3x against a fit erring high,
     * under half of the 1.6-2.0x its prefill steps, each over its bound, ran at every 2-12 steps (fleet2-8502,
     * w-mix-70b-a: 28 more of a 1.72x contention's steps missed); 16 steps span those gaps.
     */
    static final int OWN_REPORT_WITHIN = 16;
    /** {@link #stepsSinceOwnReport} when none came lately: its cap, and what a header from before it reads as. */
    static final int NO_OWN_REPORT = 1024;
    /** Weight of one reported step in the burst's mean log ratio (~8 steps). */
    static final double BURST_ALPHA = 1.0 / 8;
    /**
     * Reports among the last four judged steps with which a new cell learns no step over
     * {@link RobustRoofline#BURST_NEW_WORK_RATIO}.
     */
    static final int NEW_CELL_QUIET_REPORTS = 2;
    /** The four bits of {@link #recentReports}: as many steps as a burst is counted over. */
    static final int RECENT_REPORTS_MASK = 0xF;

    private double elevatedShare;
    /** Judged steps in a row in known cells near the model ({@link #EPISODE_OVER_RUN}). */
    private int healthyKnownRun;
    /**
     * The last four judged steps, one bit each (newest lowest): reported as outliers, or in a burst a step in new work
     * still running at half its slowdown ({@link #NEW_WORK_BURST_SHARE}).
     */
    private int recentReports;
    /** Running mean log ratio of the reported judged steps ({@link #BURST_ALPHA} per step): a burst's slowdown. */
    private double burstLog;
    /** Steps of work beyond the training held back (not learned) in the burst under way. */
    private int burstHeld;
    /** Judged steps since the last one in a known cell. */
    private int stepsSinceKnown;
    /** Judged steps in known cells reported in a row, up to the last of them (capped at {@link #SLOW_KNOWN_FLAGS}). */
    private int knownFlags;
    /** Log ratio of the last judged step in a known cell ({@link #healthyKnownWork}). */
    private double lastKnownLog;
    /** Judged steps since the last one reported over its own bound, up to {@link #NO_OWN_REPORT}. */
    private int stepsSinceOwnReport = NO_OWN_REPORT;

    /**
     * A burst is under way: at least {@link EpisodeLatch#BURST_FLAGS} of the last four judged steps were reported (or,
     * within the burst, were new work still running at half its slowdown).
     */
    boolean inBurst() {
        return Integer.bitCount(recentReports) >= EpisodeLatch.BURST_FLAGS;
    }

    /** The log of the slowdown the burst's reported steps ran at. */
    double burstLog() {
        return burstLog;
    }

    /**
     * The log ratio at and above which a step of new work is nearer the burst's slowdown than healthy work
     * ({@link #NEW_WORK_BURST_SHARE} of it): such a step keeps the burst going.
     */
    double nearBurstLog() {
        return NEW_WORK_BURST_SHARE * burstLog;
    }

    /** A step was reported over its own bound within the last {@link #OWN_REPORT_WITHIN} judged steps, this one counted. */
    boolean ownReportLately() {
        return stepsSinceOwnReport <= OWN_REPORT_WITHIN;
    }

    /** A judged step: reported over its own bound or not (called before the rules that flag it on the burst's word). */
    void ownReport(boolean overItsBound) {
        stepsSinceOwnReport = overItsBound ? 0 : Math.min(NO_OWN_REPORT, stepsSinceOwnReport + 1);
    }

    /** More than {@link #NEW_WORK_RUN} judged steps in a row were outside the cells the model knows: the instance has moved to new work. */
    boolean movedToNewWork() {
        return stepsSinceKnown > NEW_WORK_RUN;
    }

    /** No episode is under way: under {@link #MAX_CALM_ELEVATED_SHARE} of the recent steps ran above the model. */
    boolean calm() {
        return elevatedShare < MAX_CALM_ELEVATED_SHARE;
    }

    /** {@link #NEW_CELL_QUIET_REPORTS} of the last four judged steps were reported. */
    boolean amidReports() {
        return Integer.bitCount(recentReports) >= NEW_CELL_QUIET_REPORTS;
    }

    /** The last {@link #SLOW_KNOWN_FLAGS} steps in known cells were all reported, lately ({@link #SLOW_KNOWN_WITHIN}). */
    boolean slowInKnownWork() {
        return knownFlags >= SLOW_KNOWN_FLAGS && stepsSinceKnown <= SLOW_KNOWN_WITHIN;
    }

    /**
     * The previous judged step was in a known cell, and the last {@link #SLOW_KNOWN_FLAGS} known steps, it among them,
     * were all reported: where a {@link NewWorkChain} may start.
     */
    boolean justLeftSlowKnownWork() {
        return knownFlags >= SLOW_KNOWN_FLAGS && stepsSinceKnown == 1;
    }

    /**
     * The last judged step in known cells ran under {@link RobustRoofline#BURST_NEW_WORK_RATIO}, lately
     * ({@link #SLOW_KNOWN_WITHIN}): where the model knows the work's cost the device was healthy, so a burst of reports
     * in new work is the fit's error there. Healthy decode batches past the largest seen, where the fit erred 1.3x low,
     * started a burst of their own and 47 of them were flagged, with the known steps between them at 1.08-1.18x
     * (validation gen.py 3901, v-dec-7b-b): 28 validation-style sets' false positives 0.0532% -> 0.0508%, recall
     * -0.00003 (docs/BENCHMARKS.md, stop 38).
     */
    boolean healthyKnownWork() {
        return stepsSinceKnown <= SLOW_KNOWN_WITHIN && lastKnownLog < Math.log(RobustRoofline.BURST_NEW_WORK_RATIO);
    }

    /**
     * Whether a step of work beyond the training is held back, not learned: in a burst, for its first
     * {@link #BURST_HOLD} such steps (this one counted).
     */
    boolean holdBeyondTraining() {
        if (inBurst() && burstHeld < BURST_HOLD) {
            burstHeld++;
            return true;
        }
        return false;
    }

    /** A step beyond the training ran under what a burst flags in new work: the burst is over. */
    void endBurst() {
        recentReports = (recentReports << 1) & RECENT_REPORTS_MASK;
        burstHeld = 0;
    }

    /**
     * A judged step, before its verdict: its log ratio to the model moves the elevated share if it is in a known cell,
     * or lowers it once the instance has run {@link #NEW_WORK_RUN} steps of new work near the model (new work can tell
     * that an episode is over, never that one has begun: the fit's error there is wider). A known step within
     * {@code learnLog} (the model's learning margin, taken as {@link #LOG_ELEVATED} where narrower or unknown) counts
     * toward the run that ends an episode ({@link #EPISODE_OVER_RUN}).
     */
    void judged(boolean known, double logRatio, double learnLog) {
        stepsSinceKnown = known ? 0 : stepsSinceKnown + 1;
        if (known) {
            double nearLog = learnLog > LOG_ELEVATED ? learnLog : LOG_ELEVATED;
            elevatedShare += ELEVATED_ALPHA * ((logRatio > LOG_ELEVATED ? 1 : 0) - elevatedShare);
            healthyKnownRun = logRatio <= nearLog ? healthyKnownRun + 1 : 0;
            if (healthyKnownRun >= EPISODE_OVER_RUN) {
                elevatedShare = Math.min(elevatedShare, SHARE_AFTER_HEALTHY_RUN);
            }
        } else if (movedToNewWork() && logRatio <= LOG_ELEVATED) {
            elevatedShare -= ELEVATED_ALPHA * elevatedShare;
        }
    }

    /**
     * A judged step's verdict: reported or not, and its log ratio to the model (a step a {@link NewWorkChain} judged: to
     * the chain's corrected extrapolation, or where reported the burst's own slowdown, which it then leaves as it is).
     */
    void verdict(boolean known, boolean reported, double logRatio) {
        if (known) {
            lastKnownLog = logRatio;
            knownFlags = reported ? Math.min(SLOW_KNOWN_FLAGS, knownFlags + 1) : 0;
        }
        // In new work the fit's error is wide, and a burst flags there above RobustRoofline.BURST_NEW_WORK_RATIO: a
        // throttle that carried the load into lighter batches than any trained, where the fit erred 1.3x high, read
        // 1.1-1.35x, its steps under 1.2x ended the burst two at a time, and the rest went unflagged (validation gen.py
        // 6202, v-dec-70b-a: 229 of 1,032 slowed steps missed, 83 so). A step of new work still at least half the
        // burst's slowdown in log terms (nearer the burst than healthy work) keeps the burst going; a
        // healthy one there, or a known step under the bound, ends it as before. Not every step of new work over 1.1x:
        // after a 1.9x contention healthy new work read 1.15-1.3x against a fit that erred low there, and kept the burst
        // going through 19 false positives (validation gen.py 5303, docs/BENCHMARKS.md, stop 52).
        boolean burstGoesOn = reported || !known && inBurst() && logRatio >= nearBurstLog();
        recentReports = ((recentReports << 1) | (burstGoesOn ? 1 : 0)) & RECENT_REPORTS_MASK;
        if (reported) {
            burstLog += BURST_ALPHA * (Math.max(0, Math.min(EpisodeLatch.CLAMP_LOG, logRatio)) - burstLog);
        } else {
            burstHeld = 0;
        }
    }

    void saveTo(RooflineStateHeader h) {
        h.setElevatedShare(elevatedShare);
        h.setRecentReports(recentReports);
        h.setBurstLog(burstLog);
        h.setBurstHeld(burstHeld);
        h.setStepsSinceKnown(stepsSinceKnown);
        h.setKnownFlags(knownFlags);
        h.setLastKnownLog(lastKnownLog);
        h.setHealthyKnownRun(healthyKnownRun);
        h.setStepsSinceOwnReport(stepsSinceOwnReport);
    }

    void restore(RooflineStateHeader h) {
        elevatedShare = h.getElevatedShare();
        recentReports = h.getRecentReports();
        burstLog = h.getBurstLog();
        burstHeld = h.getBurstHeld();
        stepsSinceKnown = h.getStepsSinceKnown();
        knownFlags = h.getKnownFlags();
        lastKnownLog = h.getLastKnownLog();
        healthyKnownRun = h.getHealthyKnownRun();
        stepsSinceOwnReport = h.getStepsSinceOwnReport();
    }
}
