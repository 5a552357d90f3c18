package io.stepline.roofline.model.robust;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Watches for a sustained regression: a shift of the whole instance above its model that lasts
 * longer than any transient fault. Steps are taken in blocks; a block is elevated when its steps
 * run above the model by more than {@link Settings#elevatedRatio}. When nearly every step of the
 * last {@code blocks x blockSteps} steps was elevated, the shift is sustained: the alarm gives its
 * size (the median of the blocks' median residuals) and when it began (the first block of the
 * trailing run of elevated blocks). The window is longer than the longest transient slowdown the
 * detector must keep flagging (a clock throttle of a thousand steps fills at most 2/3 of it), and
 * short enough to raise the alarm within 2,000 steps.
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
        /** A step runs elevated above the model by this ratio (noise of a healthy instance: 1-5%). */
        public static final double DEFAULT_ELEVATED_RATIO = 1.1;
        /** Share of the window's steps that must be elevated. */
        public static final double DEFAULT_MIN_ELEVATED_SHARE = 0.9;
        /** The median shift must be at least this ratio. */
        public static final double DEFAULT_MIN_RATIO = 1.12;

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

    static final double QUANTUM = 100;

    private final Settings s;
    private final int elevatedQ;
    private byte[] current;
    private int filled;
    private long currentStartNs;
    private final List<int[]> full = new ArrayList<>(); // {elevated, median}
    private final List<Long> fullStart = new ArrayList<>();

    public DriftWatch(Settings s) {
        this.s = s;
        this.current = new byte[s.blockSteps()];
        this.elevatedQ = (int) Math.round(Math.log(s.elevatedRatio()) * QUANTUM);
    }

    static byte quantise(double logResidual) {
        return (byte) Math.max(-127, Math.min(127, Math.round(logResidual * QUANTUM)));
    }

    /** Takes one judged step's log(latency / expected); returns an alarm when a sustained shift is found. */
    public Alarm observe(double logResidual, long startNs) {
        if (Double.isNaN(logResidual)) {
            return null;
        }
        if (filled == 0) {
            currentStartNs = startNs;
        }
        current[filled++] = quantise(logResidual);
        if (filled < s.blockSteps()) {
            return null;
        }
        int elevated = 0;
        for (byte q : current) {
            elevated += q >= elevatedQ ? 1 : 0;
        }
        byte[] sorted = current.clone();
        Arrays.sort(sorted);
        full.add(new int[] {elevated, sorted[sorted.length / 2]});
        fullStart.add(currentStartNs);
        filled = 0;
        if (full.size() > s.blocks()) {
            full.remove(0);
            fullStart.remove(0);
        }
        return check();
    }

    private Alarm check() {
        if (full.size() < s.blocks()) {
            return null;
        }
        int elevated = 0;
        int[] medians = new int[full.size()];
        for (int i = 0; i < full.size(); i++) {
            elevated += full.get(i)[0];
            medians[i] = full.get(i)[1];
        }
        Arrays.sort(medians);
        double shift = medians[medians.length / 2] / QUANTUM;
        if (elevated < s.minElevatedShare() * s.blocks() * s.blockSteps() || shift < Math.log(s.minRatio())) {
            return null;
        }
        int first = full.size() - 1;
        while (first > 0 && full.get(first - 1)[0] >= 0.8 * s.blockSteps()) {
            first--;
        }
        Alarm a = new Alarm(Math.exp(shift), fullStart.get(first));
        reset();
        return a;
    }

    /** Forgets the window: after a re-anchoring, a new shift must fill it again. */
    public void reset() {
        full.clear();
        fullStart.clear();
        filled = 0;
    }

    // state, for the header record

    byte[] currentBlock() {
        return Arrays.copyOf(current, filled);
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

    void restore(byte[] block, long startNs, List<Integer> elevated, List<Integer> median, List<Long> starts) {
        if (block.length >= s.blockSteps() || elevated.size() != median.size() || median.size() != starts.size() || starts.size() > s.blocks()) {
            throw new IllegalArgumentException("drift watch state does not fit the settings");
        }
        current = new byte[s.blockSteps()];
        System.arraycopy(block, 0, current, 0, block.length);
        filled = block.length;
        currentStartNs = startNs;
        full.clear();
        fullStart.clear();
        for (int i = 0; i < elevated.size(); i++) {
            full.add(new int[] {elevated.get(i), median.get(i)});
            fullStart.add(starts.get(i));
        }
    }
}
