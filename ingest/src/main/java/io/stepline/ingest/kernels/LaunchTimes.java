package io.stepline.ingest.kernels;

import java.util.Arrays;

/**
 * Correlation id -> start of the CPU call that launched it, for every launch call of a trace (one
 * per kernel, copy or set, hundreds of thousands in a long trace): two primitive arrays with open
 * addressing, about a fifth of the heap a {@code HashMap<Long, Long>} takes.
 */
final class LaunchTimes {
    /** What {@link #get} answers for a correlation id with no launch; also the empty-slot marker (no id takes it). */
    static final long NONE = Long.MIN_VALUE;
    private static final int INITIAL_CAPACITY = 1 << 10;

    private long[] keys = filled(INITIAL_CAPACITY);
    private long[] values = new long[INITIAL_CAPACITY];
    private int size;

    /** Records a launch; a later one with the same id replaces it. {@link #NONE} is not an id. */
    void put(long correlation, long startNs) {
        if (correlation == NONE) {
            throw new IllegalArgumentException("no correlation id");
        }
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int i = slot(keys, correlation);
        if (keys[i] == NONE) {
            keys[i] = correlation;
            size++;
        }
        values[i] = startNs;
    }

    /** The launch time of {@code correlation}, or {@link #NONE}. */
    long get(long correlation) {
        if (correlation == NONE) {
            return NONE;
        }
        int i = slot(keys, correlation);
        return keys[i] == NONE ? NONE : values[i];
    }

    int size() {
        return size;
    }

    /** The slot holding {@code key}, or the empty one where it would go (linear probing; the table is at most half full). */
    private static int slot(long[] keys, long key) {
        int mask = keys.length - 1;
        int i = (int) mix(key) & mask;
        while (keys[i] != NONE && keys[i] != key) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** Spreads sequential ids (CUPTI counts them up) over the table. */
    private static long mix(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 32);
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldValues = values;
        keys = filled(oldKeys.length * 2);
        values = new long[oldKeys.length * 2];
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] != NONE) {
                int i = slot(keys, oldKeys[j]);
                keys[i] = oldKeys[j];
                values[i] = oldValues[j];
            }
        }
    }

    private static long[] filled(int n) {
        long[] a = new long[n];
        Arrays.fill(a, NONE);
        return a;
    }
}
