package io.sora.examples.bench;

import java.util.Locale;

/**
 * Round-trip samples of one message size in a ping-pong sweep, and what they cost. The samples
 * array is sized once for the largest repetition, so recording never allocates; percentiles are
 * computed after each repetition, outside the timed loop. Used by one thread.
 *
 * <p>Figures it reports (keys after {@code pp.SIZE.}): {@code rtt_median_ns} (median of the
 * repetitions' medians), {@code rtt_p99_ns} (median of their 99th percentiles), {@code rtt_p999_ns}
 * (99.9th percentile of all samples pooled), {@code rtt_rep_min_ns}/{@code rtt_rep_max_ns} (spread of
 * the repetitions' medians), {@code rtt_max_ns}, {@code samples}, {@code bps} (message bytes a second
 * each way, median over repetitions), {@code msgs} and {@code bytes} (round trips timed, bytes moved in
 * both directions), and the CPU and allocation of both sides over the timed loops.
 */
final class RttRecorder {
    private final long[] samples;
    private final long[] repMedians;
    private final long[] repP99;
    private final double[] repBps;
    private final int reps;
    private int size;
    private int iterations;
    private final long[] costs = new long[4];

    RttRecorder(int reps, int maxIterations) {
        if (reps < 1 || maxIterations < 1) {
            throw new IllegalArgumentException("need reps >= 1 and iterations >= 1, got " + reps + ", " + maxIterations);
        }
        this.reps = reps;
        this.samples = new long[Math.multiplyExact(reps, maxIterations)];
        this.repMedians = new long[reps];
        this.repP99 = new long[reps];
        this.repBps = new double[reps];
    }

    /** Starts a new message size; {@code iterations} per repetition must fit the array sized at construction. */
    void start(int size, int iterations) {
        if ((long) iterations * reps > samples.length) {
            throw new IllegalArgumentException(iterations + " iterations x " + reps + " reps exceed " + samples.length + " samples");
        }
        this.size = size;
        this.iterations = iterations;
        java.util.Arrays.fill(costs, 0);
    }

    long[] samples() {
        return samples;
    }

    /** Index of sample {@code i} of repetition {@code rep}. */
    int index(int rep, int i) {
        return rep * iterations + i;
    }

    /** Closes repetition {@code rep}: its throughput, median and 99th percentile (sorts its range). */
    void endRep(int rep) {
        int from = rep * iterations;
        int to = from + iterations;
        long sum = 0;
        for (int i = from; i < to; i++) {
            sum += samples[i];
        }
        repBps[rep] = (double) size * iterations * 1e9 / Math.max(1, sum);
        repMedians[rep] = Stats.percentile(samples, from, to, 50);
        repP99[rep] = Stats.percentile(samples, from, to, 99);
    }

    /** Adds one repetition's costs: client CPU ns, client thread bytes allocated, and the server's (-1 = unknown). */
    void addCosts(long clientCpu, long clientAlloc, long serverCpu, long serverAlloc) {
        long[] add = {clientCpu, clientAlloc, serverCpu, serverAlloc};
        for (int i = 0; i < 4; i++) {
            costs[i] = costs[i] < 0 || add[i] < 0 ? -1 : costs[i] + add[i];
        }
    }

    /** Appends this size's figures as {@code pp.SIZE.key=value} words. */
    void appendTo(StringBuilder b) {
        int n = reps * iterations;
        long[] medians = repMedians.clone();
        long[] p99 = repP99.clone();
        double[] bps = repBps.clone();
        long median = Stats.percentile(medians, 50);
        long p999 = Stats.percentile(samples, 0, n, 99.9);
        String p = " pp." + size + ".";
        b.append(p).append("rtt_median_ns=").append(median)
                .append(p).append("rtt_p99_ns=").append(Stats.percentile(p99, 50))
                .append(p).append("rtt_p999_ns=").append(p999)
                .append(p).append("rtt_rep_min_ns=").append(medians[0])
                .append(p).append("rtt_rep_max_ns=").append(medians[reps - 1])
                .append(p).append("rtt_max_ns=").append(samples[n - 1])
                .append(p).append("samples=").append(n)
                .append(p).append("bps=").append(String.format(Locale.ROOT, "%.0f", Stats.median(bps)))
                .append(p).append("msgs=").append(n)
                .append(p).append("bytes=").append(2L * size * n);
        appendCosts(b, p, costs);
    }

    /** Appends {@code cpu_client_ns, alloc_client, cpu_server_ns, alloc_server} in that order of {@code c}. */
    static void appendCosts(StringBuilder b, String prefix, long[] c) {
        b.append(prefix).append("cpu_client_ns=").append(c[0])
                .append(prefix).append("alloc_client=").append(c[1])
                .append(prefix).append("cpu_server_ns=").append(c[2])
                .append(prefix).append("alloc_server=").append(c[3]);
    }
}
