package io.stepline.roofline.model.robust;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Watches for a sustained regression: a shift of the whole instance above its model that lasts
 * longer than any transient fault. Steps are taken in blocks of {@link Settings#blockSteps}; a step
 * is elevated when it runs above the model by more than {@link Settings#elevatedRatio}. When
 * {@link Settings#minElevatedShare} of the last {@code blocks x blockSteps} steps were elevated,
 * the shift is sustained: the alarm gives its size (the median of the blocks' medians) and when it
 * began (the first block of the trailing run of elevated blocks). The window is longer than the longest transient slowdown the
 * detector must keep flagging (a clock throttle of a thousand steps fills at most 2/3 of it), and
 * short enough to raise the alarm within 2,000 steps. A shift that stands under the step bound is found
 * sooner, after {@link #QUICK_BLOCKS} elevated blocks: the bound does not flag its steps, so no transient
 * slowdown the detector must keep flagging looks like it, and the watch is all that can find it.
 *
 * <p>Every block is read against the level's anchor: its median step plus the level's rise over the anchor
 * when the block completed. The model's level follows part of a regression within a few hundred steps,
 * which the residuals alone no longer show; read against the anchor, a regression's blocks stand above the
 * model from the first to the last, the alarm's ratio is the whole shift ({@link ModelLevel#onAlarm} puts
 * the level there), and {@link #onset} names where it began.
 *
 * <p>After an alarm the model is re-anchored on the shift; for {@link #watchEnd the next blocks} the
 * watch also looks for the shift to end: {@link #END_BLOCKS} blocks in a row whose median step runs
 * {@link Settings#minRatio} below the re-anchored model (or one block, or the first {@link #END_PARTIAL_STEPS} steps of
 * the one under way, half a large shift below it: {@link #END_BLOCK_SHARE}) say it was a long episode (a throttle of 1,100
 * steps with a contention 57 steps after it filled the window on validation seed 301), and the alarm
 * returned then, with a ratio under 1, undoes the re-anchoring.
 *
 * <p>Residuals are kept quantised to hundredths of a natural log (one byte each) so the state of
 * an instance stays small.
 */
public final class DriftWatch {
    /** Validated settings; defaults documented on each constant. */
    public record Settings(int blockSteps, int blocks, double elevatedRatio, double minElevatedShare, double minRatio) {
        /** Steps per block. */
        public static final int DEFAULT_BLOCK_STEPS = 100;
        /** Blocks in the window: 1,500 steps. */
        public static final int DEFAULT_BLOCKS = 15;
        /**
         * A step is elevated when it runs this much above the model: a regression of some kernels slows
         * some steps by 10-40% and others by less, healthy noise leaves 2-12% of steps above it.
         */
        public static final double DEFAULT_ELEVATED_RATIO = 1.06;
        /** Share of the window's steps that must be elevated: a slowdown of 1,200 steps fills at most 0.8 of it. */
        public static final double DEFAULT_MIN_ELEVATED_SHARE = 0.85;
        /** The median shift must be at least this ratio. */
        public static final double DEFAULT_MIN_RATIO = 1.1;

        public Settings {
            if (blockSteps < 10 || blocks < 2) {
                throw new IllegalArgumentException("need blockSteps >= 10 and blocks >= 2");
            }
            if (!(elevatedRatio > 1) || !(minRatio > 1) || !(minElevatedShare > 0 && minElevatedShare <= 1)) {
                throw new IllegalArgumentException("need elevatedRatio > 1, minRatio > 1, 0 < minElevatedShare <= 1");
            }
        }

        public static Settings defaults() {
            return new Settings(DEFAULT_BLOCK_STEPS, DEFAULT_BLOCKS, DEFAULT_ELEVATED_RATIO, DEFAULT_MIN_ELEVATED_SHARE, DEFAULT_MIN_RATIO);
        }
    }

    /** A sustained shift by {@code ratio} since {@code sinceNs}. */
    public record Alarm(double ratio, long sinceNs) {}

    /**
     * Where a shift standing now shows in the window, against the level's anchor: since the start of the
     * block before the trailing run of blocks that ran {@link #ONSET_RATIO} and half the newest block's
     * shift above it, by {@code exp(shiftLog)} (the newest block's).
     */
    public record Onset(long sinceNs, double shiftLog) {}

    /** A block whose median step ran this far above the anchored model stands above it (the level's rise start). */
    static final double ONSET_RATIO = ModelLevel.LEVEL_RISE_START;

    static final double QUANTUM = 100;
    /**
     * The newest block's median must stand within this (log) of the window's shift for an alarm: a sustained shift
     * stands now where it stood before. On validation seed 301 a 2x contention began 57 steps after a 1,138-step
     * 1.61x throttle; the window alarmed at the contention's first block (1.86x against 1.58x), re-anchored 1.58x
     * and hid the contention under the bound. A regression's blocks lie within a few percent of each other.
     */
    static final double NEWEST_BLOCK_AGREEMENT = Math.log(1.15);
    /** Blocks in a row running below the re-anchored model that say the shift an alarm re-anchored on has ended. */
    static final int END_BLOCKS = 3;
    /**
     * One block whose median step runs this share of a re-anchored shift below the model says it has ended too, for a
     * shift large enough that this share is itself at least {@link Settings#minRatio}: steps back at the level before
     * a 1.49x shift run a third below the re-anchored model, far outside any block's spread. Three blocks took 300-399
     * steps, and a contention 333 steps after a 1.49x throttle ended began under the re-anchored bound, 248 of its
     * steps and all 274 of the next one's unflagged (validation variant {@code faults2} seed 801, docs/BENCHMARKS.md).
     */
    static final double END_BLOCK_SHARE = 0.5;
    /**
     * Steps of the block under way enough to say, by {@link #END_BLOCK_SHARE}, that a watched shift has ended, without
     * waiting for the block to complete: a throttle re-anchored on ended 81 steps before a second one began, the blocks'
     * boundaries fell so that neither block's median showed the gap, and the second throttle ran at the re-anchored model
     * (validation-style faults2-8001, v-dec-7b-b: 1,034 slowed steps missed, 0 so; no other of 434 sets moved by more
     * than a step, docs/BENCHMARKS.md stop 60). The median of 40 steps with 10% noise is within 2-3% of the drop.
     */
    static final int END_PARTIAL_STEPS = 40;
    /**
     * Elevated blocks in a row after which a shift under the step bound is sustained (see {@link #observe}). With the
     * whole window, a regression had to last about 1,300 steps to be found (median delay 1,289 steps for the 1.22x
     * regressions of 64 validation-style sets), and five that began in the last third of 4,000-step traces were not
     * (docs/BENCHMARKS.md, 2026-11-27 evening); with 8 blocks four of them were, at a median delay of 790 steps, and
     * step recall and false positives moved on one of the 73 sets (a false alarm came sooner, and the false positives
     * that had followed it went). 6 blocks raised two more false alarms; 10 gave the same alarms as 8, later. Once
     * the blocks were read against the level's anchor (stop 55), over 180 validation-style sets: 8 blocks found 359 of
     * 360 regressions, two more than 2,000 steps in (median delay 1,002 steps); 7 all 360, one past 2,000 (844); 6 all
     * 360 within 2,000 (790), false regression reports 238 -> 240, slowed steps missed and clean steps flagged as with
     * 8; 5 missed 537 more slowed steps (noisy instances' throttles re-anchored on) and raised 8 more false reports.
     */
    static final int QUICK_BLOCKS = 6;
    /**
     * Elevated blocks in a row after which a shift over the step bound, but under the line at which a shift is as large
     * as a fault ({@link RobustRoofline#STANDING_RATIO}), is sustained. Such a shift's steps are mostly flagged one by
     * one, but its report waited for the whole window (13 of 15 blocks elevated): the validation generator's 1.45x
     * regressions were reported 1,100-1,350 steps after they began, and in 20 traces of 3,000-20,000 steps (most of
     * 3,000-4,000, where they begin in the last third) 8 of 40 regressions were never reported. With 10 blocks 2; over 180
     * validation-style sets of the default length, every regression reported as before, the 1.45x ones ~300 steps
     * sooner (p90 delay 1,324 -> 1,047 steps), slowed steps missed in throttles of up to 1,200 steps (the longest the
     * issue asks to tell from a regression) 3,500 -> 3,537 of 1,440,038, in longer ones (the faults2 variant's, read a
     * quantum or two under the line and re-anchored on 300 steps sooner) 4,793 -> 5,102; false regression reports
     * 240 -> 250. 8 blocks found the same short-trace regressions and missed 920 more slowed steps; 12 found one of the
     * eight (docs/BENCHMARKS.md, stop 56). Shifts at or over the line wait for the whole window: a throttle that long
     * is reported once and left standing, one shorter is not reported at all.
     */
    static final int QUICK_OVER_BLOCKS = 10;
    /** The log of the line under which a shift over the bound takes the quick path ({@link #QUICK_OVER_BLOCKS}). */
    private static final double QUICK_OVER_BELOW_LOG = Math.log(RobustRoofline.STANDING_RATIO);

    private final Settings s;
    private final int elevatedQ;
    /** A block whose median step is this far above the model (minRatio) is elevated, whatever its share. */
    private final int medianElevatedQ;
    private byte[] current;
    /** Per step of the current block: whether it also counts for the instance's tail (see TailBound). */
    private final java.util.BitSet tailMask = new java.util.BitSet();
    private int filled;
    /** The block completed by the last observe, for the tail; null when none was. */
    private byte[] completed;
    private java.util.BitSet completedMask;
    private long currentStartNs;
    private final int onsetQ = (int) Math.round(Math.log(ONSET_RATIO) * QUANTUM);
    private final List<int[]> full = new ArrayList<>(); // {elevated, median, level's rise over its anchor}
    private final List<Long> fullStart = new ArrayList<>();
    /** Blocks left in which the shift of the last alarm may still be found to have ended (0: not watched), and that shift. */
    private int watchBlocks;
    private double watchShiftLog;

    public DriftWatch(Settings s) {
        this.s = s;
        this.current = new byte[s.blockSteps()];
        this.elevatedQ = (int) Math.round(Math.log(s.elevatedRatio()) * QUANTUM);
        this.medianElevatedQ = (int) Math.round(Math.log(s.minRatio()) * QUANTUM);
    }

    static byte quantise(double logResidual) {
        return (byte) Math.max(-127, Math.min(127, Math.round(logResidual * QUANTUM)));
    }

    /** The onset of the shift the last alarm reported (null if none, or the alarm had no onset). */
    private Onset alarmOnset;

    /** {@link #observe(double, long, boolean, double, double)} of a watch that knows no step bound: the whole window only. */
    public Alarm observe(double logResidual, long startNs, boolean forTail, double levelRiseLog) {
        return observe(logResidual, startNs, forTail, levelRiseLog, Double.NaN);
    }

    /**
     * Takes one judged step's log(latency / expected), and whether it counts for the tail; returns an
     * alarm when a sustained shift is found. {@code levelRiseLog}: log of the model level over its anchor
     * now, which a completed block keeps so that its residuals can be read against the anchor.
     * {@code quickBelowLog}: log of the step bound now, read against the anchor as the blocks are (the bound over the
     * model plus the level's rise); a shift under it is sustained after {@link #QUICK_BLOCKS} elevated blocks, one over it
     * but not fault-sized after {@link #QUICK_OVER_BLOCKS} (NaN: never before the whole window).
     */
    public Alarm observe(double logResidual, long startNs, boolean forTail, double levelRiseLog, double quickBelowLog) {
        completed = null;
        alarmOnset = null;
        if (Double.isNaN(logResidual)) {
            return null;
        }
        if (filled == 0) {
            currentStartNs = startNs;
        }
        tailMask.set(filled, forTail);
        current[filled++] = quantise(logResidual);
        if (filled < s.blockSteps()) {
            return watchBlocks > 0 ? shiftEndedInBlock(levelRiseLog) : null;
        }
        completed = current.clone();
        completedMask = (java.util.BitSet) tailMask.clone();
        tailMask.clear();
        int elevated = 0;
        for (byte q : current) {
            elevated += q >= elevatedQ ? 1 : 0;
        }
        byte[] sorted = current.clone();
        Arrays.sort(sorted);
        full.add(new int[] {elevated, sorted[sorted.length / 2], quantise(levelRiseLog)});
        fullStart.add(currentStartNs);
        filled = 0;
        if (full.size() > s.blocks()) {
            full.remove(0);
            fullStart.remove(0);
        }
        if (watchBlocks > 0) {
            watchBlocks--;
            Alarm end = shiftEnded();
            if (end != null) {
                return end;
            }
        }
        return check(quickBelowLog);
    }

    /** The model was re-anchored on a shift by {@code ratio}: for the next {@code steps} steps, watch for it to end. */
    public void watchEnd(double ratio, int steps) {
        watchBlocks = Math.max(0, steps / s.blockSteps());
        watchShiftLog = Math.log(ratio);
    }

    /** Whether the shift of the last alarm is still watched for its end (the model's learning holds back meanwhile). */
    public boolean watchingEnd() {
        return watchBlocks > 0;
    }

    /**
     * The last {@link #END_BLOCKS} blocks ran the minimum ratio below the model, or the last one half the shift
     * ({@link #END_BLOCK_SHARE}): the shift has ended, by their median block's drop (that block's), at most the
     * whole shift. Null otherwise.
     */
    private Alarm shiftEnded() {
        if (!full.isEmpty() && END_BLOCK_SHARE * watchShiftLog * QUANTUM >= medianElevatedQ
                && anchored(full.size() - 1) <= -END_BLOCK_SHARE * watchShiftLog * QUANTUM) {
            return ended(anchored(full.size() - 1), fullStart.get(full.size() - 1));
        }
        if (full.size() < END_BLOCKS) {
            return null;
        }
        int[] medians = new int[END_BLOCKS];
        for (int i = 0; i < END_BLOCKS; i++) {
            medians[i] = anchored(full.size() - 1 - i);
            if (medians[i] > -medianElevatedQ) {
                return null;
            }
        }
        Arrays.sort(medians);
        return ended(medians[END_BLOCKS / 2], fullStart.get(full.size() - END_BLOCKS));
    }

    /**
     * The steps of the block under way, at least {@link #END_PARTIAL_STEPS} of them, ran half a large shift below the
     * re-anchored model ({@link #END_BLOCK_SHARE}): the shift has ended, by their median. Null otherwise.
     */
    private Alarm shiftEndedInBlock(double levelRiseLog) {
        if (filled < END_PARTIAL_STEPS || END_BLOCK_SHARE * watchShiftLog * QUANTUM < medianElevatedQ) {
            return null;
        }
        byte[] sorted = Arrays.copyOf(current, filled);
        Arrays.sort(sorted);
        int medianQ = sorted[filled / 2] + quantise(levelRiseLog);
        if (medianQ > -END_BLOCK_SHARE * watchShiftLog * QUANTUM) {
            return null;
        }
        return ended(medianQ, currentStartNs);
    }

    /** The watched shift ended in the steps since {@code sinceNs}, by their median {@code medianQ}: the alarm that undoes it. */
    private Alarm ended(int medianQ, long sinceNs) {
        double drop = Math.max(medianQ / QUANTUM, -watchShiftLog);
        watchBlocks = 0;
        reset();
        return new Alarm(Math.exp(drop), sinceNs);
    }

    private Alarm check(double quickBelowLog) {
        if (full.size() < s.blocks()) {
            return quick(quickBelowLog);
        }
        int elevated = 0;
        int elevatedBlocks = 0;
        int[] medians = new int[full.size()];
        for (int i = 0; i < full.size(); i++) {
            elevated += full.get(i)[0];
            elevatedBlocks += blockElevated(full.get(i)) ? 1 : 0;
            medians[i] = anchored(i);
        }
        Arrays.sort(medians);
        double shift = medians[medians.length / 2] / QUANTUM;
        // nearly every step above the model, or (a regression that slows some steps more than others)
        // nearly every block's median step above it
        boolean sustained = elevated >= s.minElevatedShare() * s.blocks() * s.blockSteps()
                || elevatedBlocks >= Math.ceil(s.minElevatedShare() * s.blocks());
        if (!sustained || shift < Math.log(s.minRatio()) || interrupted()) {
            return quick(quickBelowLog);
        }
        return alarm(shift);
    }

    /**
     * Whether a block after the window's first elevated one ran at the model or under it, read against the level's
     * anchor as the onset is (its median step and the level's rise): the window holds two episodes with a healthy spell
     * between them, not one shift, and waits until the first has left it. A regression runs above the anchored model in
     * every block from its start; a 1,120-step 1.74x throttle, 113 healthy steps and a 179-step 1.93x contention filled
     * 13 of the 15 blocks and were reported as a 1.68x sustained regression (validation gen.py 6204, v-mix-70b-b). Over
     * 180 validation-style sets (docs/BENCHMARKS.md, stop 54): false sustained-regression reports 280 -> 258, every
     * regression still reported (3 more after they began, not only before), median report delay 970 -> 958 steps.
     * Read without the level's rise, the blocks of a regression the level had begun to follow ran at the model, and
     * the median report came at 1,050 steps.
     */
    private boolean interrupted() {
        int first = 0;
        while (first < full.size() && !blockElevated(full.get(first))) {
            first++;
        }
        for (int i = first + 1; i < full.size(); i++) {
            if (anchored(i) <= 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The last {@link #QUICK_OVER_BLOCKS} blocks all elevated by a shift (their median block's) over {@code quickBelowLog}
     * and under {@link RobustRoofline#STANDING_RATIO}, or the last {@link #QUICK_BLOCKS} by one under it.
     */
    private Alarm quick(double quickBelowLog) {
        if (!(quickBelowLog > 0)) {
            return null;
        }
        double over = elevatedRunShift(QUICK_OVER_BLOCKS);
        if (over >= quickBelowLog && over < QUICK_OVER_BELOW_LOG) {
            return alarm(over);
        }
        double under = elevatedRunShift(QUICK_BLOCKS);
        return under >= Math.log(s.minRatio()) && under < quickBelowLog ? alarm(under) : null;
    }

    /**
     * The shift that stands when the input ends: the trailing run of elevated blocks, at least {@code minBlocks} of them and
     * none read at the model or under it, by their median block's shift (at least {@link Settings#minRatio}), since the
     * first of them; null when there is none, when a re-anchored shift is still watched for its end, or when the block
     * under way (once it holds {@link #END_PARTIAL_STEPS} steps) is no longer elevated: the shift ended just before the input.
     * {@code levelRiseLog}: the level's rise over its anchor now, against which the block under way is read.
     */
    Alarm standingAtEnd(int minBlocks, double levelRiseLog) {
        if (watchBlocks > 0 || full.size() < minBlocks) {
            return null;
        }
        if (filled >= END_PARTIAL_STEPS) {
            byte[] sorted = Arrays.copyOf(current, filled);
            Arrays.sort(sorted);
            int elevated = 0;
            for (int i = 0; i < filled; i++) {
                elevated += current[i] >= elevatedQ ? 1 : 0;
            }
            if (elevated < s.minElevatedShare() * filled && sorted[filled / 2] + quantise(levelRiseLog) < medianElevatedQ) {
                return null;
            }
        }
        int run = 0;
        while (run < full.size() && blockElevated(full.get(full.size() - 1 - run))) {
            run++;
        }
        if (run < minBlocks) {
            return null;
        }
        int[] medians = new int[run];
        for (int i = 0; i < run; i++) {
            medians[i] = anchored(full.size() - 1 - i);
            if (medians[i] <= 0) {
                return null;
            }
        }
        Arrays.sort(medians);
        int shiftQ = medians[run / 2];
        return shiftQ < medianElevatedQ ? null : new Alarm(Math.exp(shiftQ / QUANTUM), fullStart.get(full.size() - run));
    }

    /** The median shift of the last {@code blocks} blocks, read against the anchor, if every one of them is elevated; else NaN. */
    private double elevatedRunShift(int blocks) {
        if (full.size() < blocks) {
            return Double.NaN;
        }
        int[] medians = new int[blocks];
        for (int i = 0; i < blocks; i++) {
            int[] block = full.get(full.size() - 1 - i);
            if (!blockElevated(block)) {
                return Double.NaN;
            }
            medians[i] = anchored(block);
        }
        Arrays.sort(medians);
        return medians[blocks / 2] / QUANTUM;
    }

    /** The alarm of a sustained shift by {@code exp(shift)}, unless the newest block stands apart from it; forgets the window. */
    private Alarm alarm(double shift) {
        if (Math.abs(anchored(full.size() - 1) / QUANTUM - shift) > NEWEST_BLOCK_AGREEMENT) {
            return null; // the newest block stands apart: an episode begun on top of the window's (or ended), not the shift now
        }
        int first = full.size() - 1;
        while (first > 0 && blockElevated(full.get(first - 1))) {
            first--;
        }
        Alarm a = new Alarm(Math.exp(shift), fullStart.get(first));
        alarmOnset = onset();
        reset();
        return a;
    }

    /**
     * The shift standing now against the level's anchor (see {@link Onset}); null when the newest block
     * did not run {@link #ONSET_RATIO} above it. A regression's first blocks stand above the model while the
     * level has not yet followed it, its later ones because the level has: read against the anchor, the
     * run of blocks begins where the regression did.
     */
    public Onset onset() {
        int last = full.size() - 1;
        if (last < 0 || anchored(last) < onsetQ) {
            return null;
        }
        // half the shift as well: the level of a healthy instance creeps a few percent above its anchor over
        // thousands of steps (simulator seeds 1-4: blocks 3-5% above it up to 1,000 steps before the regression)
        int minQ = Math.max(onsetQ, anchored(last) / 2);
        int first = last;
        while (first > 0 && anchored(first - 1) >= minQ) {
            first--;
        }
        // a block's median stands above half the shift once most of its steps are in it: a shift that began in
        // the second half of the block before the run left that block below, so the start is that block's
        // (the earliest it can be: outlier runs between then and the alarm are the shift, seen step by step)
        return new Onset(fullStart.get(Math.max(0, first - 1)), anchored(last) / QUANTUM);
    }

    /** The onset of the shift the last {@link #observe} alarmed on, taken before the window was forgotten. */
    public Onset alarmOnset() {
        return alarmOnset;
    }

    /** The median step of the window's {@code block}th block, read against the level's anchor. */
    private int anchored(int block) {
        return anchored(full.get(block));
    }

    private static int anchored(int[] block) {
        return block[1] + block[2];
    }

    private boolean blockElevated(int[] block) {
        return block[0] >= s.minElevatedShare() * s.blockSteps() || anchored(block) >= medianElevatedQ;
    }

    /** Forgets the window: after a re-anchoring, a new shift must fill it again. */
    public void reset() {
        full.clear();
        fullStart.clear();
        filled = 0;
    }

    /** Whether the last observe completed a block (which changes the blocks the state holds). */
    boolean completedBlock() {
        return completed != null;
    }

    /** Whether the newest block's median step, read against the level's anchor, ran at the model or under it. */
    boolean newestBlockAtModel() {
        return !full.isEmpty() && anchored(full.size() - 1) <= 0;
    }

    /** Quantised residuals of the tail-eligible steps of the block the last observe completed (empty if none). */
    int[] completedTailResiduals() {
        if (completed == null) {
            return new int[0];
        }
        return completedMask.stream().map(i -> completed[i]).toArray();
    }

    // state, for the header record

    byte[] currentBlock() {
        return Arrays.copyOf(current, filled);
    }

    byte[] currentTailMask() {
        return tailMask.toByteArray();
    }

    long currentStartNs() {
        return currentStartNs;
    }

    List<Integer> blockElevated() {
        return full.stream().map(b -> b[0]).toList();
    }

    List<Integer> blockMedian() {
        return full.stream().map(b -> b[1]).toList();
    }

    List<Long> blockStarts() {
        return List.copyOf(fullStart);
    }

    List<Integer> blockLevelRise() {
        return full.stream().map(b -> b[2]).toList();
    }

    int watchBlocks() {
        return watchBlocks;
    }

    double watchShiftLog() {
        return watchShiftLog;
    }

    void restoreWatch(int blocks, double shiftLog) {
        watchBlocks = blocks;
        watchShiftLog = shiftLog;
    }

    /**
     * Restores the state; {@code levelRise} may be empty (state written before blocks kept the level's rise),
     * read as a level at its anchor.
     */
    void restore(byte[] block, byte[] mask, long startNs, List<Integer> elevated, List<Integer> median, List<Long> starts, List<Integer> levelRise) {
        if (block.length >= s.blockSteps() || elevated.size() != median.size() || median.size() != starts.size() || starts.size() > s.blocks()
                || (!levelRise.isEmpty() && levelRise.size() != starts.size())) {
            throw new IllegalArgumentException("drift watch state does not fit the settings");
        }
        current = new byte[s.blockSteps()];
        System.arraycopy(block, 0, current, 0, block.length);
        filled = block.length;
        tailMask.clear();
        tailMask.or(java.util.BitSet.valueOf(mask));
        currentStartNs = startNs;
        full.clear();
        fullStart.clear();
        for (int i = 0; i < elevated.size(); i++) {
            full.add(new int[] {elevated.get(i), median.get(i), levelRise.isEmpty() ? 0 : levelRise.get(i)});
            fullStart.add(starts.get(i));
        }
    }
}
