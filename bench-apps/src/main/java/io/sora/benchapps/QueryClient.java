package io.sora.benchapps;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The client JVM of one run: plain JDBC against the server's URL. Creates table {@code t} with
 * {@code ROWS} rows, runs {@code WARMUP} untimed point queries, then {@code QUERIES} timed ones
 * ({@code SELECT v FROM t WHERE id = ?} through one PreparedStatement, ids drawn from a fixed
 * seed), each timed with {@link System#nanoTime()} into a preallocated {@code long[]} and each
 * result compared with the expected value (outside the timed interval). Prints one line
 * {@code RESULT key=value...} and exits 0; any wrong or missing row fails the run.
 *
 * <p>Arguments: {@code URL ROWS WARMUP QUERIES SEED DRIVER_PID DEADLINE_MS}.
 */
public final class QueryClient {
    private QueryClient() {
    }

    static String valueOf(int id) {
        return "row-" + id + "-" + Integer.toHexString(id * 0x9E3779B1);
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rows = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        int queries = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        Watchdog.start("client", Long.parseLong(args[5]), Long.parseLong(args[6]));

        SplittableRandom random = new SplittableRandom(seed);
        int[] warmIds = random.ints(warmup, 0, rows).toArray();
        int[] ids = random.ints(queries, 0, rows).toArray();
        String[] expected = new String[rows];
        for (int i = 0; i < rows; i++) {
            expected[i] = valueOf(i);
        }
        long[] nanos = new long[queries];
        String[] got = new String[queries];

        long c0 = System.nanoTime();
        try (Connection con = DriverManager.getConnection(url)) {
            long connectNanos = System.nanoTime() - c0;
            long s0 = System.nanoTime();
            try (Statement st = con.createStatement()) {
                st.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(64))");
            }
            con.setAutoCommit(false);
            try (PreparedStatement ins = con.prepareStatement("INSERT INTO t (id, v) VALUES (?, ?)")) {
                for (int i = 0; i < rows; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, expected[i]);
                    ins.addBatch();
                }
                ins.executeBatch();
            }
            con.commit();
            con.setAutoCommit(true);
            long setupNanos = System.nanoTime() - s0;

            try (PreparedStatement ps = con.prepareStatement("SELECT v FROM t WHERE id = ?")) {
                for (int id : warmIds) {
                    String v = query(ps, id);
                    if (!expected[id].equals(v)) {
                        throw new IllegalStateException("warm-up query id=" + id + ": expected " + expected[id] + ", got " + v);
                    }
                }
                long t0 = System.nanoTime();
                for (int i = 0; i < queries; i++) {
                    long a = System.nanoTime();
                    got[i] = query(ps, ids[i]);
                    nanos[i] = System.nanoTime() - a;
                }
                long totalNanos = System.nanoTime() - t0;
                long stallNanos = Long.getLong("sora.bench.stalls", 0) * 1000;
                if (stallNanos > 0) {
                    // wall-clock time of each query longer than the bound, to set beside the JVMs' logs
                    long wall0 = System.currentTimeMillis() * 1_000_000 - (System.nanoTime() - t0);
                    long at = 0;
                    StringBuilder sb = new StringBuilder();
                    for (int i = 0; i < queries; i++) {
                        at += nanos[i];
                        if (nanos[i] >= stallNanos) sb.append(String.format(Locale.ROOT, "STALL %d %.3f %d%n", i, (wall0 + at) / 1e6, nanos[i] / 1000));
                    }
                    System.out.print(sb);
                }
                for (int i = 0; i < queries; i++) {
                    if (!expected[ids[i]].equals(got[i])) {
                        throw new IllegalStateException("query " + i + " id=" + ids[i] + ": expected " + expected[ids[i]] + ", got " + got[i]);
                    }
                }
                printResult(nanos, totalNanos, connectNanos, setupNanos);
            }
        }
        System.exit(0);
    }

    /**
     * The {@code RESULT} line every query client of the module prints (parsed by {@link Child}), each
     * timed query verified; before it the histogram, with {@code -Dsora.bench.histogram=true}.
     */
    static void printResult(long[] nanos, long totalNanos, long connectNanos, long setupNanos) {
        int queries = nanos.length;
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        if (Boolean.getBoolean("sora.bench.histogram")) System.out.println(histogram(sorted));
        if (Boolean.getBoolean("sora.bench.timeline")) {
            // the mean of each block of queries (1,000, or -Dsora.bench.timelineBlock), in order: when a run
            // gets fast, and what it cost before
            int block = Math.max(1, Integer.getInteger("sora.bench.timelineBlock", 1000));
            StringBuilder tl = new StringBuilder("TIMELINE mean us per " + block + " queries:");
            for (int b = 0; b + block <= queries; b += block) {
                long sum = 0;
                for (int i = b; i < b + block; i++) sum += nanos[i];
                tl.append(' ').append(sum / 1000 / block);
            }
            System.out.println(tl);
        }
        System.out.println(String.format(Locale.ROOT,
                "RESULT queries=%d verified=%d median_us=%.3f p99_us=%.3f max_us=%.3f total_ms=%.3f qps=%.1f connect_ms=%.3f setup_ms=%.3f",
                queries, queries, percentile(sorted, 50) / 1e3, percentile(sorted, 99) / 1e3, sorted[queries - 1] / 1e3,
                totalNanos / 1e6, queries / (totalNanos / 1e9), connectNanos / 1e6, setupNanos / 1e6));
        System.out.flush();
        if (Boolean.getBoolean("sora.bench.schedstat")) System.out.print(schedStat());
    }

    /**
     * Per thread of this JVM ({@code -Dsora.bench.schedstat=true}): CPU time, time runnable but waiting
     * for a CPU, and time slices, from {@code /proc/self/task/N/schedstat}. Time spent waiting for a CPU
     * is what a busy-waiting peer or a crowded machine costs a thread that has work.
     */
    static String schedStat() {
        StringBuilder sb = new StringBuilder();
        java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
        if (tasks == null) return "";
        for (java.io.File t : tasks) {
            try {
                String comm = java.nio.file.Files.readString(t.toPath().resolve("comm")).trim();
                String[] f = java.nio.file.Files.readString(t.toPath().resolve("schedstat")).trim().split(" ");
                long run = Long.parseLong(f[0]), wait = Long.parseLong(f[1]);
                if (run + wait < 1_000_000) continue;
                sb.append(String.format(Locale.ROOT, "SCHED %-28s run_ms=%.1f wait_ms=%.1f slices=%s%n",
                        comm.replace(' ', '_'), run / 1e6, wait / 1e6, f[2]));
            } catch (java.io.IOException | RuntimeException e) {
                // a thread that ended while being read
            }
        }
        return sb.toString();
    }

    /** One point query: the row's value, or a failure when there is not exactly one row. */
    private static String query(PreparedStatement ps, int id) throws Exception {
        ps.setInt(1, id);
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new IllegalStateException("no row for id " + id);
            }
            String v = rs.getString(1);
            if (rs.next()) {
                throw new IllegalStateException("more than one row for id " + id);
            }
            return v;
        }
    }

    /**
     * Where the time went: per power-of-two bucket of latency, how many queries and what share of the
     * total time they took ({@code -Dsora.bench.histogram=true}): a tail that costs more in total than
     * the median saves shows here as a few queries taking a large share.
     */
    static String histogram(long[] sorted) {
        long total = 0;
        for (long n : sorted) total += n;
        StringBuilder sb = new StringBuilder("HISTOGRAM (bucket: queries, share of total time)");
        int i = 0;
        while (i < sorted.length) {
            int lg = 63 - Long.numberOfLeadingZeros(Math.max(1, sorted[i]));
            long upper = 1L << (lg + 1);
            long sum = 0;
            int count = 0;
            while (i < sorted.length && sorted[i] < upper) {
                sum += sorted[i++];
                count++;
            }
            sb.append(String.format(Locale.ROOT, "%n  %8.1f-%-8.1f us: %6d  %5.1f%%", (upper >> 1) / 1e3, upper / 1e3, count,
                    100.0 * sum / Math.max(1, total)));
        }
        return sb.toString();
    }

    /** Nearest-rank percentile of a sorted array. */
    static long percentile(long[] sorted, double p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
