package io.stepline.roofline.model;

/**
 * The k-th smallest of some doubles without sorting them all (quickselect, O(n) expected): the
 * model takes medians of its whole window at every refit, where two full sorts were a tenth of
 * the detector thread's time. Values are ordered as {@link Double#compare} orders them, which is
 * also how {@link java.util.Arrays#sort(double[])} orders them, so the result is exactly the
 * element a sort would put at index k.
 */
final class OrderStatistic {
    private OrderStatistic() {}

    /**
     * The element a sort of {@code a[0, n)} would put at index {@code k}; reorders {@code a[0, n)}.
     *
     * @throws IllegalArgumentException if {@code k} is not in {@code [0, n)} or {@code n > a.length}
     */
    static double kth(double[] a, int n, int k) {
        if (n > a.length || k < 0 || k >= n) {
            throw new IllegalArgumentException("k = " + k + " outside [0, " + n + ") of an array of " + a.length);
        }
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            double pivot = medianOfThree(a[lo], a[lo + (hi - lo) / 2], a[hi]);
            // three-way partition: [lo, lt) < pivot, [lt, gt] == pivot, (gt, hi] > pivot; windows of
            // equal values (a constant latency, zero deviations) are then done in one pass
            int lt = lo;
            int gt = hi;
            int i = lo;
            while (i <= gt) {
                int c = Double.compare(a[i], pivot);
                if (c < 0) {
                    swap(a, lt++, i++);
                } else if (c > 0) {
                    swap(a, i, gt--);
                } else {
                    i++;
                }
            }
            if (k < lt) {
                hi = lt - 1;
            } else if (k > gt) {
                lo = gt + 1;
            } else {
                return a[k];
            }
        }
        return a[k];
    }

    private static double medianOfThree(double x, double y, double z) {
        if (Double.compare(x, y) > 0) {
            double t = x;
            x = y;
            y = t;
        }
        if (Double.compare(y, z) > 0) {
            y = z;
        }
        return Double.compare(x, y) > 0 ? x : y;
    }

    private static void swap(double[] a, int i, int j) {
        double t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}
