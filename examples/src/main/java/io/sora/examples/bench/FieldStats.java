package io.sora.examples.bench;

import java.util.Arrays;

/**
 * The arithmetic of the field benchmark, kept apart so tests can pin it down: medians over pairs,
 * the ratio of each adjacent tcp/shm pair, and the summary (median, min, max) of those ratios.
 * A NaN value stands for a figure that does not exist (a pair that fell back to TCP, a row without
 * p99): it is left out of every median and every ratio, never counted as a number. Stateless.
 */
final class FieldStats {
    /** Median and spread of some values, with how many of them were real (not NaN). */
    record Summary(double median, double min, double max, int count) {
        static final Summary NONE = new Summary(Double.NaN, Double.NaN, Double.NaN, 0);
    }

    private FieldStats() {
    }

    /**
     * The median of the non-NaN values: the middle one of an odd count, the mean of the two middle
     * ones of an even count; NaN when there is none. Does not modify {@code values}.
     */
    static double median(double[] values) {
        double[] v = real(values);
        if (v.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(v);
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    /** Median, min and max of the non-NaN values ({@link Summary#NONE} when there is none). */
    static Summary summarize(double[] values) {
        double[] v = real(values);
        if (v.length == 0) {
            return Summary.NONE;
        }
        Arrays.sort(v);
        return new Summary(median(v), v[0], v[v.length - 1], v.length);
    }

    /**
     * The ratio of each adjacent pair {@code i} (tcp run {@code i}, then shm run {@code i}), oriented so
     * that a ratio above 1 means shm was faster: {@code tcp / shm} for latencies ({@code higherIsBetter}
     * false), {@code shm / tcp} for throughputs. A pair where either figure is NaN or not positive has
     * ratio NaN.
     *
     * @throws IllegalArgumentException if the arrays differ in length (pairs must alternate)
     */
    static double[] pairRatios(double[] tcp, double[] shm, boolean higherIsBetter) {
        if (tcp.length != shm.length) {
            throw new IllegalArgumentException("tcp has " + tcp.length + " runs but shm has " + shm.length
                    + ": ratios need alternating pairs");
        }
        double[] r = new double[tcp.length];
        for (int i = 0; i < r.length; i++) {
            double t = tcp[i];
            double s = shm[i];
            boolean ok = t > 0 && s > 0 && Double.isFinite(t) && Double.isFinite(s);
            r[i] = !ok ? Double.NaN : higherIsBetter ? s / t : t / s;
        }
        return r;
    }

    /** Per-pair quotients {@code num[i] / den[i]} (NaN where either is missing); e.g. shm / floor. */
    static double[] quotients(double[] num, double[] den) {
        if (num.length != den.length) {
            throw new IllegalArgumentException(num.length + " numerators but " + den.length + " denominators");
        }
        double[] r = new double[num.length];
        for (int i = 0; i < r.length; i++) {
            boolean ok = num[i] > 0 && den[i] > 0 && Double.isFinite(num[i]) && Double.isFinite(den[i]);
            r[i] = ok ? num[i] / den[i] : Double.NaN;
        }
        return r;
    }

    private static double[] real(double[] values) {
        return Arrays.stream(values).filter(d -> !Double.isNaN(d)).toArray();
    }
}
