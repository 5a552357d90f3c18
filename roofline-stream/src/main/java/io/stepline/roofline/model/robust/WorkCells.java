package io.stepline.roofline.model.robust;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.stepline.events.RooflineStateCell;
import io.stepline.schemas.EventSerdes;

/**
 * The model's memory of healthy steps across the instance's whole operating range: the work space
 * (prefill tokens and prompts, decode requests, KV context) is cut into buckets, and each occupied bucket (a
 * cell) keeps its latest few healthy steps. A rolling window forgets what the instance did a few
 * minutes ago when load sweeps; cells forget a region only when newer steps of that same region
 * replace it, or when the cell is the least recently used one and room is needed. The fit is
 * trained on all cells' points, so every region the instance visits counts, however briefly.
 */
public final class WorkCells {
    /** Floats per point: prefill tokens, prefill requests, decode requests, decode tokens, KV context, latency / level (ns). */
    public static final int POINT_WIDTH = 6;
    /** Points a cell keeps. */
    public static final int DEFAULT_POINTS_PER_CELL = 6;
    /**
     * Cells an instance keeps (bounds its state: 256 x (6 points x 24 bytes + 40) = 47 KB). 256, not 192: cut by
     * {@link #TOKEN_BOUNDS}, steps with prefill spread over ~30% more cells, and a load spread evenly over 64-2,047 prompt
     * tokens, 1-96 decode requests and their contexts (ModelsTest's) kept fewer of its steps in known cells, whose
     * residuals are what the drift watch reads: over five seeds a 1.175x regression was reported within 2,000 steps on
     * one (four with the earlier buckets), and with 256 cells on four again.
     */
    public static final int DEFAULT_MAX_CELLS = 256;

    /** Where each bucket sits in a cell's key: context in bits 0-4, decode 5-10, tokens of a prefill step 11-15, prompts 16-19. */
    private static final int DECODE_SHIFT = 5;
    private static final int TOKENS_SHIFT = 11;
    private static final int PROMPTS_SHIFT = 16;
    private static final int CONTEXT_MASK = (1 << DECODE_SHIFT) - 1;
    private static final int DECODE_MASK = (1 << (TOKENS_SHIFT - DECODE_SHIFT)) - 1;

    private final int pointsPerCell;
    private final int maxCells;
    private final int[] keys;
    private final long[] lastUsed;
    private final int[] next;
    private final int[] count;
    private final float[][] points;
    private final double[] offsets;
    private final Map<Integer, Integer> slotOfKey = new HashMap<>();
    private final BitSet dirty = new BitSet();
    private int used;

    public WorkCells(int pointsPerCell, int maxCells) {
        if (pointsPerCell < 3 || maxCells < 8) {
            throw new IllegalArgumentException("need pointsPerCell >= 3 and maxCells >= 8");
        }
        this.pointsPerCell = pointsPerCell;
        this.maxCells = maxCells;
        this.keys = new int[maxCells];
        this.lastUsed = new long[maxCells];
        this.next = new int[maxCells];
        this.count = new int[maxCells];
        this.points = new float[maxCells][pointsPerCell * POINT_WIDTH];
        this.offsets = new double[maxCells];
        Arrays.fill(offsets, Double.NaN);
    }

    /**
     * The upper bounds (inclusive) of the token buckets of a step with prefill: 16, 24, 32, 48, 64, ... (16 x 2^k and
     * 24 x 2^k) scheduled tokens, so that every power of two from 16 up is a bound. A step's linear layers run over all
     * its scheduled tokens, and GEMM tiling makes their cost jump just past powers of two: Vidur's H100 profiles
     * ({@code ../shared/data}) rise 1.09-1.55x from 512 to 520 tokens for seven of the eight pairs of Llama-2 7B or 70B
     * and tensor-parallel degree 1-8, 1.19-1.55x from 256 to 264 for seven, 1.12-1.29x from 1,024 to 1,040 for six. Cut
     * at 16 x 1.5^k of the prefill tokens alone, one cell held 410-615 tokens, and its healthy steps ran at either ~72
     * or ~108 ms (validation gen.py 4101, v-pre-70b-a): its median offset flagged the slow half at 1.4x.
     */
    private static final int[] TOKEN_BOUNDS = tokenBounds();

    private static int[] tokenBounds() {
        int[] bounds = new int[30];
        for (int i = 0; i < bounds.length; i++) {
            bounds[i] = (i % 2 == 0 ? 16 : 24) << (i / 2);
        }
        return bounds;
    }

    /** The bucket of a step's scheduled tokens (prefill and decode) if it has prefill, 0 if not: see {@link #TOKEN_BOUNDS}. */
    static int tokensBucket(double prefillTokens, double decodeTokens) {
        if (prefillTokens <= 0) {
            return 0;
        }
        double tokens = prefillTokens + Math.max(0, decodeTokens);
        int i = 0;
        while (i < TOKEN_BOUNDS.length && tokens > TOKEN_BOUNDS[i]) {
            i++;
        }
        return 1 + i;
    }

    /** Fine where CUDA-graph batch sizes step (8 wide up to 64, 32 wide up to 512), coarse beyond. */
    static int decodeBucket(double decodeReqs) {
        if (decodeReqs <= 8) {
            return (int) Math.max(0, decodeReqs);
        }
        if (decodeReqs <= 64) {
            return 8 + (int) Math.ceil((decodeReqs - 8) / 8);
        }
        if (decodeReqs <= 512) {
            return 15 + (int) Math.ceil((decodeReqs - 64) / 32);
        }
        return (int) Math.min(63, 29 + Math.ceil(4 * Math.log(decodeReqs / 512) / Math.log(2)));
    }

    static int contextBucket(double contextTokens) {
        if (contextTokens <= 0) {
            return 0;
        }
        return (int) Math.min(31, 1 + Math.max(0, Math.floor(Math.log(contextTokens / 1000) / Math.log(2))));
    }

    /** Prompts in a prefill batch: the same tokens cost more attention in one long prompt than in several short ones. */
    static int promptsBucket(double prefillReqs) {
        return (int) Math.max(0, Math.min(15, prefillReqs));
    }

    /** A cell's key: its prompts, tokens, decode and context buckets, packed (the context bucket in the low bits). */
    public static int key(double prefillTokens, double prefillReqs, double decodeReqs, double decodeTokens, double contextTokens) {
        return promptsBucket(prefillReqs) << PROMPTS_SHIFT | tokensBucket(prefillTokens, decodeTokens) << TOKENS_SHIFT
                | decodeBucket(decodeReqs) << DECODE_SHIFT | contextBucket(contextTokens);
    }

    /** The prompts and tokens buckets of a key: the part of it that the kind of prefill work decides. */
    private static int prefillPart(int key) {
        return key >>> TOKENS_SHIFT;
    }

    /**
     * The slot of the cell one decode bucket smaller than {@code key}'s, of the same prompts, tokens and context buckets;
     * -1 when there is none (or {@code key} is in the smallest decode bucket).
     */
    public int smallerBatchSlot(int key) {
        return (key >>> DECODE_SHIFT & DECODE_MASK) == 0 ? -1 : slot(key - (1 << DECODE_SHIFT));
    }

    /** The slot of a cell, or -1. */
    public int slot(int key) {
        Integer s = slotOfKey.get(key);
        return s == null ? -1 : s;
    }

    public int count(int slot) {
        return slot < 0 ? 0 : count[slot];
    }

    /** Median log residual of the cell's points against the last fit; NaN when unknown. */
    public double offset(int slot) {
        return slot < 0 ? Double.NaN : offsets[slot];
    }

    /** Adds a healthy point to its cell, making room by evicting the least recently used cell. */
    public void add(int key, long step, float[] point) {
        int s = slot(key);
        if (s < 0) {
            s = used < maxCells ? used++ : leastRecentlyUsed();
            if (count[s] > 0) {
                slotOfKey.remove(keys[s]);
            }
            keys[s] = key;
            next[s] = 0;
            count[s] = 0;
            offsets[s] = Double.NaN;
            slotOfKey.put(key, s);
        }
        System.arraycopy(point, 0, points[s], next[s] * POINT_WIDTH, POINT_WIDTH);
        next[s] = (next[s] + 1) % pointsPerCell;
        count[s] = Math.min(pointsPerCell, count[s] + 1);
        lastUsed[s] = step;
        dirty.set(s);
    }

    /** Marks a cell used by a step (judged against it) without adding a point. */
    public void touch(int slot, long step) {
        if (slot >= 0 && lastUsed[slot] != step) {
            lastUsed[slot] = step;
            dirty.set(slot); // eviction order is state: a restored model must evict what the running one would
        }
    }

    private int leastRecentlyUsed() {
        int best = 0;
        for (int s = 1; s < used; s++) {
            if (lastUsed[s] < lastUsed[best]) {
                best = s;
            }
        }
        return best;
    }

    public int cells() {
        return used;
    }

    /** The most points a cell keeps. */
    public int pointsPerCell() {
        return pointsPerCell;
    }

    /**
     * The slot of the known cell (offset set, at least {@code minPoints}) nearest to {@code key} among
     * cells of the same prompts and tokens buckets, by decode and context buckets apart (at most
     * {@code maxApart}); -1 when none. Ties go to the cell with more points, then the lower slot.
     */
    public int nearestKnown(int key, int maxApart, int minPoints) {
        int best = -1;
        int bestApart = maxApart + 1;
        for (int s = 0; s < used; s++) {
            int k = keys[s];
            if (count[s] < minPoints || Double.isNaN(offsets[s]) || prefillPart(k) != prefillPart(key)) {
                continue;
            }
            int apart = Math.abs((k >>> DECODE_SHIFT & DECODE_MASK) - (key >>> DECODE_SHIFT & DECODE_MASK))
                    + Math.abs((k & CONTEXT_MASK) - (key & CONTEXT_MASK));
            if (apart < bestApart || (apart == bestApart && best >= 0 && count[s] > count[best])) {
                best = s;
                bestApart = apart;
            }
        }
        return best;
    }

    /** Cells with at least {@code min} points. */
    public int cellsWithAtLeast(int min) {
        int n = 0;
        for (int s = 0; s < used; s++) {
            n += count[s] >= min ? 1 : 0;
        }
        return n;
    }

    public int points() {
        int n = 0;
        for (int s = 0; s < used; s++) {
            n += count[s];
        }
        return n;
    }

    /** Reads point {@code i} of {@code slot} into {@code out}. */
    public void point(int slot, int i, float[] out) {
        System.arraycopy(points[slot], i * POINT_WIDTH, out, 0, POINT_WIDTH);
    }

    public void setOffset(int slot, double offset) {
        if (Double.compare(offsets[slot], offset) != 0) {
            offsets[slot] = offset;
            dirty.set(slot);
        }
    }

    /**
     * Cells changed since the last call, by slot, each encoded as its {@link RooflineStateCell}
     * (the bytes of {@code EventSerdes.ROOFLINE_STATE_CELL.encode(state(slot))}, written from the
     * arrays: boxing the points into a record for every judged step was 9% of the detector's stream
     * thread in a pipeline profile, issue 19); clears the dirty set.
     */
    public Map<Integer, byte[]> drainDirty() {
        Map<Integer, byte[]> out = new HashMap<>();
        for (int s = dirty.nextSetBit(0); s >= 0; s = dirty.nextSetBit(s + 1)) {
            out.put(s, encodedState(s));
        }
        dirty.clear();
        return out;
    }

    /** Forgets which cells changed (after a restore, which wrote nothing new). */
    public void clearDirty() {
        dirty.clear();
    }

    private byte[] encodedState(int s) {
        return EventSerdes.ROOFLINE_STATE_CELL.encodeFields(out -> {
            out.writeInt(keys[s]);
            out.writeLong(lastUsed[s]);
            out.writeInt(next[s]);
            out.writeInt(count[s]);
            int n = count[s] * POINT_WIDTH;
            out.writeArrayStart();
            out.setItemCount(n);
            for (int i = 0; i < n; i++) {
                out.startItem();
                out.writeFloat(points[s][i]);
            }
            out.writeArrayEnd();
            out.writeDouble(offsets[s]);
        });
    }

    /** The state record of one cell (what {@link #drainDirty} encodes). */
    RooflineStateCell state(int s) {
        List<Float> pts = new ArrayList<>(count[s] * POINT_WIDTH);
        for (int i = 0; i < count[s] * POINT_WIDTH; i++) {
            pts.add(points[s][i]);
        }
        return new RooflineStateCell(keys[s], lastUsed[s], next[s], count[s], pts, offsets[s]);
    }

    /** Restores one cell from its state record. */
    public void restore(int slot, RooflineStateCell c) {
        if (slot < 0 || slot >= maxCells) {
            throw new IllegalArgumentException("cell slot " + slot + " outside [0, " + maxCells + ")");
        }
        if (c.getCount() > pointsPerCell || c.getPoints().size() != c.getCount() * POINT_WIDTH) {
            throw new IllegalArgumentException("cell state of slot " + slot + " holds " + c.getPoints().size() + " floats for " + c.getCount() + " points");
        }
        used = Math.max(used, slot + 1);
        if (c.getCount() > 0 && prefillPart(c.getKey()) != prefillPart(keyOfPoint(c.getPoints(), latestPoint(c.getNext())))) {
            // cut by the buckets before TOKEN_BOUNDS (prefill tokens alone, 16 x 1.5^k): its points are not of the work
            // its key now names, so the cell is left empty and first in line for reuse, and its work learned anew
            keys[slot] = 0;
            lastUsed[slot] = Long.MIN_VALUE;
            next[slot] = 0;
            count[slot] = 0;
            offsets[slot] = Double.NaN;
            return;
        }
        keys[slot] = c.getKey();
        lastUsed[slot] = c.getLastUsedStep();
        next[slot] = c.getNext() % pointsPerCell;
        count[slot] = c.getCount();
        for (int i = 0; i < c.getPoints().size(); i++) {
            points[slot][i] = c.getPoints().get(i);
        }
        offsets[slot] = c.getOffset();
        slotOfKey.put(keys[slot], slot);
    }

    /** The index of a cell's latest point: the one before its ring position (which a cell not yet full keeps at its count). */
    private int latestPoint(int ringNext) {
        return (ringNext % pointsPerCell + pointsPerCell - 1) % pointsPerCell;
    }

    private static int keyOfPoint(List<Float> pts, int i) {
        int o = i * POINT_WIDTH;
        return key(pts.get(o), pts.get(o + 1), pts.get(o + 2), pts.get(o + 3), pts.get(o + 4));
    }

    public long stateBytes() {
        return (long) used * (pointsPerCell * POINT_WIDTH * 4 + 40);
    }
}
