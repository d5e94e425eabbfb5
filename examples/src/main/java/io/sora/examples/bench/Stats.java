package io.sora.examples.bench;

import java.util.Arrays;

/**
 * Order statistics over preallocated {@code long[]} samples. Timed loops only store into an array
 * sized before the loop; sorting and ranking happen afterwards, so measuring never allocates.
 * Not thread-safe; the arrays belong to the caller.
 */
final class Stats {
    private Stats() {
    }

    /**
     * Sorts {@code a[from, to)} in place and returns its {@code p}-th percentile by nearest rank
     * (p = 50 is the median of an odd count, the lower middle of an even one).
     *
     * @throws IllegalArgumentException if the range is empty or p is outside [0, 100]
     */
    static long percentile(long[] a, int from, int to, double p) {
        if (from < 0 || to > a.length || from >= to) {
            throw new IllegalArgumentException("empty or bad sample range [" + from + ", " + to + ") of " + a.length);
        }
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be between 0 and 100: " + p);
        }
        Arrays.sort(a, from, to);
        return a[from + rankIndex(to - from, p)];
    }

    /** Percentile of a whole array (sorted in place). */
    static long percentile(long[] a, double p) {
        return percentile(a, 0, a.length, p);
    }

    /** Median of doubles (sorted in place); used for per-repetition throughput figures. */
    static double median(double[] a) {
        if (a.length == 0) {
            throw new IllegalArgumentException("median of no values");
        }
        Arrays.sort(a);
        return a[rankIndex(a.length, 50)];
    }

    /** Zero-based index of the nearest-rank percentile among n sorted values. */
    private static int rankIndex(int n, double p) {
        // 1-based nearest rank; the epsilon keeps 99.9 % of 1000 at 999, not 1000 (99.9 is not exact in binary)
        int rank = (int) Math.ceil(p * n / 100.0 - 1e-9);
        return Math.min(n - 1, Math.max(0, rank - 1));
    }
}
