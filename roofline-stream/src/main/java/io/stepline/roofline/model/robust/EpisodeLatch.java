package io.stepline.roofline.model.robust;

import io.stepline.events.RooflineStateHeader;

/**
 * Holds a model still while an abrupt slowdown lasts. A level that follows unreported drift also
 * follows a clock throttle's steps that happen to land under the bound, and each such step brings
 * the next ones under it: within a hundred steps the throttle looks normal. What tells the two
 * apart is how they start: drift creeps, so the steps before its first flags already ran high; a
 * throttle jumps, from steps near the model to a burst of flags. The latch closes on such a jump
 * and opens again when the steps drop back: by {@link #DROP_LOG} below what they ran at during the
 * episode, or a run of them near the model (or when the drift watch re-anchors). The drop matters
 * because the held model falls behind the drift it no longer follows: after a short slowdown the
 * steps may never come back near it.
 */
final class EpisodeLatch {
    /** Flags among the last four steps that make a burst. */
    static final int BURST_FLAGS = 3;
    /** Weight of one step in the running mean log ratio of the steps before a burst (~16 steps). */
    static final double CALM_ALPHA = 1.0 / 16;
    /** Before a burst the steps ran no higher than this on average: the burst is a jump, not creep. */
    static final double CALM_LOG = Math.log(1.1);
    /** Consecutive steps near the model that end an episode. */
    static final int EXIT_RUN = 8;
    /** Weight of one step in the short mean of an episode's log ratios (~4-8 steps)... */
    static final double SHORT_ALPHA = 1.0 / 4;
    /** ...and in the episode's own slow mean, which its drops do not move (~32 steps). */
    static final double EPISODE_ALPHA = 1.0 / 32;
    /** The short mean this far below the episode's: the slowdown is over (a 1.5x slowdown's end drops by 0.4). */
    static final double DROP_LOG = Math.log(1.2);
    /** Log ratios are clamped to this for the means: one step a hundred times slower is one slow step. */
    static final double CLAMP_LOG = 1;
    /** An episode longer than this is no transient slowdown: the latch opens and the drift watch judges it. */
    static final int MAX_STEPS = 2_000;

    private int recentFlags;
    private double calmLog;
    private boolean closed;
    private int nearRun;
    private int steps;
    private double shortLog;
    private double episodeLog;

    /** Takes one judged step; returns whether the model must hold still for it. */
    boolean observe(boolean outlier, double logRatio, double nearLog) {
        recentFlags = ((recentFlags << 1) | (outlier ? 1 : 0)) & 0xF;
        double clamped = Math.max(-CLAMP_LOG, Math.min(CLAMP_LOG, logRatio));
        if (closed) {
            steps++;
            nearRun = !outlier && Math.abs(logRatio) <= nearLog ? nearRun + 1 : 0;
            shortLog += SHORT_ALPHA * (clamped - shortLog);
            boolean dropped = shortLog < episodeLog - DROP_LOG;
            if (!dropped) {
                episodeLog += EPISODE_ALPHA * (clamped - episodeLog);
            }
            if (nearRun >= EXIT_RUN || dropped || steps > MAX_STEPS) {
                closed = false;
                nearRun = 0;
                steps = 0;
            }
            return closed;
        }
        if (outlier && Integer.bitCount(recentFlags) >= BURST_FLAGS && calmLog < CALM_LOG) {
            closed = true;
            steps = 0;
            nearRun = 0;
            shortLog = clamped;
            episodeLog = clamped;
            return true;
        }
        if (!outlier) {
            calmLog += CALM_ALPHA * (Math.max(-nearLog, Math.min(nearLog, logRatio)) - calmLog);
        }
        return false;
    }

    /** The state as the header stores it. */
    void saveTo(RooflineStateHeader.Builder h) {
        h.setLatchRecentFlags(recentFlags).setLatchCalmLog(calmLog).setLatchClosed(closed).setLatchNearRun(nearRun).setLatchSteps(steps)
                .setLatchShortLog(shortLog).setLatchEpisodeLog(episodeLog);
    }

    void restore(RooflineStateHeader h) {
        recentFlags = h.getLatchRecentFlags();
        calmLog = h.getLatchCalmLog();
        closed = h.getLatchClosed();
        nearRun = h.getLatchNearRun();
        steps = h.getLatchSteps();
        shortLog = h.getLatchShortLog();
        episodeLog = h.getLatchEpisodeLog();
    }

    boolean closed() {
        return closed;
    }

    void release() {
        closed = false;
        nearRun = 0;
        steps = 0;
    }
}
