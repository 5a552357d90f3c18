package io.stepline.roofline.model;

/**
 * The k-th smallest of some doubles without sorting them all (quickselect, O(n) expected): the
 * model takes medians of its whole window at every refit, where two full sorts were a tenth of
 * the detector thread's time. Values are ordered as {@link Double#compare} orders them, which is
 * also how {@link java.util.Arrays#sort(double[])} orders them, so the result is the element a
 * sort would put at index k (a NaN comes back as the canonical NaN).
 */
final class OrderStatistic {
    private OrderStatistic() {}

    /**
     * The element a sort of {@code a[0, n)} would put at index {@code k}; {@code a} is not modified.
     *
     * @throws IllegalArgumentException if {@code k} is not in {@code [0, n)} or {@code n > a.length}
     */
    static double kth(double[] a, int n, int k) {
        if (n > a.length || k < 0 || k >= n) {
            throw new IllegalArgumentException("k = " + k + " outside [0, " + n + ") of an array of " + a.length);
        }
        // as longs whose signed order is Double.compare's order: plain comparisons in the loop below
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            long bits = Double.doubleToLongBits(a[i]);
            keys[i] = bits ^ ((bits >> 63) & Long.MAX_VALUE);
        }
        long key = select(keys, n, k);
        return Double.longBitsToDouble(key ^ ((key >> 63) & Long.MAX_VALUE));
    }

    private static long select(long[] a, int n, int k) {
        int lo = 0;
        int hi = n - 1;
        long state = n; // pivots from a fixed pseudo-random sequence: the same result and work every time
        while (lo < hi) {
            // the median of three pseudo-random candidates: the window's values arrive in any order,
            // sorted runs and V shapes (deviations from a median) included, where fixed positions
            // such as the ends and the middle can pick a pivot near the top every time
            state = state * 6364136223846793005L + 1442695040888963407L;
            int span = hi - lo + 1;
            long pivot = medianOfThree(a[lo + (int) ((state >>> 33) % span)], a[lo + (int) (((state >>> 2) & 0x7fff_ffffL) % span)],
                    a[lo + (int) (((state >>> 17) & 0x7fff_ffffL) % span)]);
            // Hoare's partition: afterwards [lo, j] <= pivot <= [i, hi], and what lies between equals it
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    long t = a[i];
                    a[i++] = a[j];
                    a[j--] = t;
                }
            }
            if (k <= j) {
                hi = j;
            } else if (k >= i) {
                lo = i;
            } else {
                return a[k];
            }
        }
        return a[k];
    }

    private static long medianOfThree(long x, long y, long z) {
        return Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    }
}
