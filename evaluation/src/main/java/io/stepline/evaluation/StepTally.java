package io.stepline.evaluation;

/**
 * Counts of truth steps by what they were and whether they were flagged, for the whole set or
 * one instance. "Scored" steps are the scorable ones outside sustained regressions: the
 * population of every rate here.
 */
public final class StepTally {
    private long unscorable;
    private long inSustained;
    private long scored;
    private long scoredFlagged;
    private long clean;
    private long cleanFlagged;
    private long intrinsic;
    private long intrinsicFlagged;
    private long faulted;
    private long faultedFlagged;
    private long slowed;
    private long slowedFlagged;

    void countUnscorable() {
        unscorable++;
    }

    void countInSustained() {
        inSustained++;
    }

    void countScored(boolean flagged) {
        scored++;
        scoredFlagged += flagged ? 1 : 0;
    }

    void countClean(boolean flagged) {
        clean++;
        cleanFlagged += flagged ? 1 : 0;
    }

    void countIntrinsic(boolean flagged) {
        intrinsic++;
        intrinsicFlagged += flagged ? 1 : 0;
    }

    void countFaulted(boolean flagged) {
        faulted++;
        faultedFlagged += flagged ? 1 : 0;
    }

    /** A faulted step slowed at least the minimum slowdown: the population of step recall. */
    void countSlowed(boolean flagged) {
        slowed++;
        slowedFlagged += flagged ? 1 : 0;
    }

    /** Steps whose latency no detector could know (left out of every figure). */
    public long unscorable() {
        return unscorable;
    }

    /** Scorable steps inside a sustained regression (left out of every step figure). */
    public long inSustained() {
        return inSustained;
    }

    public long scored() {
        return scored;
    }

    public long scoredFlagged() {
        return scoredFlagged;
    }

    public long clean() {
        return clean;
    }

    public long cleanFlagged() {
        return cleanFlagged;
    }

    public long intrinsic() {
        return intrinsic;
    }

    public long intrinsicFlagged() {
        return intrinsicFlagged;
    }

    public long faulted() {
        return faulted;
    }

    public long faultedFlagged() {
        return faultedFlagged;
    }

    public long slowed() {
        return slowed;
    }

    public long slowedFlagged() {
        return slowedFlagged;
    }

    /** Flagged share of the faulted steps slowed at least the minimum slowdown; null when there are none. */
    public Double stepRecall() {
        return ratio(slowedFlagged, slowed);
    }

    /** Flagged share of the clean steps; null when there are none. */
    public Double fpRateClean() {
        return ratio(cleanFlagged, clean);
    }

    /** Flagged share of the intrinsic (natural variance) steps; null when there are none. */
    public Double intrinsicFlagRate() {
        return ratio(intrinsicFlagged, intrinsic);
    }

    /** Faulted share of the flagged scored steps; null when none was flagged. */
    public Double stepPrecision() {
        return ratio(faultedFlagged, scoredFlagged);
    }

    static Double ratio(long num, long den) {
        return den == 0 ? null : (double) num / den;
    }
}
