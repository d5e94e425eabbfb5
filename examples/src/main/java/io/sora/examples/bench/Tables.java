package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The result tables of a run, each a title and rows of cells (row 0 the column heads), built once
 * and rendered by {@link Report} as fixed-width text or Markdown and stored in {@code results.json}.
 * Immutable once built.
 */
final class Tables {
    /** One table. */
    record Table(String title, List<String[]> rows) {
    }

    private final BenchOptions options;
    private final List<Measurement> results;
    private final Startup.Result startup;

    Tables(BenchOptions options, List<Measurement> results, Startup.Result startup) {
        this.options = options;
        this.results = results;
        this.startup = startup;
    }

    List<Table> all(String us) {
        List<Table> t = new ArrayList<>();
        if (results.stream().anyMatch(m -> m.route().pingPong)) {
            t.add(ppMatrix("Ping-pong round trip, median (" + us + "), by message size", "rtt_median_ns", true));
            t.add(ppMatrix("Ping-pong round trip, p99 (" + us + ")", "rtt_p99_ns", true));
            t.add(ppMatrix("Ping-pong round trip, p99.9 (" + us + "), all repetitions pooled", "rtt_p999_ns", true));
            t.add(ppMatrix("Ping-pong throughput (MB/s each way = message size / mean round trip)", "bps", false));
        }
        if (results.stream().anyMatch(m -> m.route().streams)) {
            t.add(streamMatrix());
            if (results.stream().anyMatch(m -> !Double.isNaN(m.copy("bps")))) {
                t.add(copyTable());
            }
            t.add(costTable());
        }
        if (startup != null) {
            t.add(startupTable(us));
        }
        return t;
    }

    private Table ppMatrix(String title, String key, boolean micros) {
        List<String[]> rows = new ArrayList<>();
        rows.add(head("path (placement)", options.sizes));
        for (Measurement m : results) {
            if (!m.route().pingPong) {
                continue;
            }
            String[] r = new String[options.sizes.length + 1];
            r[0] = m.name();
            for (int i = 0; i < options.sizes.length; i++) {
                double v = m.pp(options.sizes[i], key);
                r[i + 1] = micros ? Report.micros(v) : Report.mbps(v);
            }
            rows.add(r);
        }
        return new Table(title, rows);
    }

    private Table streamMatrix() {
        List<String[]> rows = new ArrayList<>();
        rows.add(head("path (placement)", options.writeSizes));
        for (Measurement m : results) {
            if (!m.route().streams) {
                continue;
            }
            String[] r = new String[options.writeSizes.length + 1];
            r[0] = m.name();
            for (int i = 0; i < options.writeSizes.length; i++) {
                r[i + 1] = Report.mbps(m.streamBps(options.writeSizes[i]));
            }
            rows.add(r);
        }
        return new Table("One-way streaming throughput (MB/s), by write size; median of " + options.streamReps
                + " repetitions", rows);
    }

    private Table copyTable() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"path (placement)", "MB/s (median)", "reps min-max (MB/s)", "file", "CRC-32C at receiver",
            "CPU client (ns/KiB)", "CPU server (ns/KiB)", "alloc client (B/chunk)", "alloc server (B/chunk)"});
        for (Measurement m : results) {
            if (Double.isNaN(m.copy("bps"))) {
                continue;
            }
            rows.add(new String[] {m.name(), Report.mbps(m.copy("bps")),
                Report.mbps(m.copy("bps_min")) + " - " + Report.mbps(m.copy("bps_max")),
                Sweep.label(options.copyBytes()) + " x " + options.copyReps,
                "yes".equals(m.values().get("copy.verified")) ? "matches " + m.values().get("copy.crc") : "?",
                Report.num(m.cpuNsPerKiB("copy.", false)), Report.num(m.cpuNsPerKiB("copy.", true)),
                Report.num(m.allocPerMessage("copy.", false)), Report.num(m.allocPerMessage("copy.", true))});
        }
        return new Table("File copy (" + Sweep.label(options.copyChunk) + " reads and writes, /dev/shm to /dev/shm)", rows);
    }

    /** CPU per KiB moved and allocation per message, at the headline sizes, plus the worst allocation at any size. */
    private Table costTable() {
        int pp = Report.closest(options.sizes, 4096);
        int st = Report.closest(options.writeSizes, 65536);
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"path (placement)", "ping-pong " + Sweep.label(pp) + ": CPU client / server (ns/KiB)",
            "alloc client / server (B/round trip)", "stream " + Sweep.label(st) + ": CPU client / server (ns/KiB)",
            "alloc client / server (B/write)", "most alloc at any size, client / server (B/msg)"});
        for (Measurement m : results) {
            if (!m.route().streams && !m.route().pingPong) {
                continue;
            }
            String ppKey = "pp." + pp + ".";
            String stKey = "st." + st + ".";
            rows.add(new String[] {m.name(), pair(m.cpuNsPerKiB(ppKey, false), m.cpuNsPerKiB(ppKey, true)),
                pair(m.allocPerMessage(ppKey, false), m.allocPerMessage(ppKey, true)),
                pair(m.cpuNsPerKiB(stKey, false), m.cpuNsPerKiB(stKey, true)),
                pair(m.allocPerMessage(stKey, false), m.allocPerMessage(stKey, true)),
                pair(worstAlloc(m, false), worstAlloc(m, true))});
        }
        return new Table("CPU time per KiB moved (whole process, each side) and heap bytes allocated per message"
                + " (data-path thread)", rows);
    }

    private double worstAlloc(Measurement m, boolean server) {
        double worst = Double.NaN;
        for (int s : options.sizes) {
            worst = max(worst, m.allocPerMessage("pp." + s + ".", server));
        }
        for (int s : options.writeSizes) {
            worst = max(worst, m.allocPerMessage("st." + s + ".", server));
        }
        return worst;
    }

    private static double max(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }

    private Table startupTable(String us) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"JVM running Hello", "median (ms)", "min - max (ms)"});
        rows.add(new String[] {"without agent", Report.millis(startup.withoutMedian()),
            Report.millis(startup.withoutMin()) + " - " + Report.millis(startup.withoutMax())});
        rows.add(new String[] {"with agent (rules match nothing)", Report.millis(startup.withMedian()),
            Report.millis(startup.withMin()) + " - " + Report.millis(startup.withMax())});
        rows.add(new String[] {"added by the agent", Report.millis(startup.addedNanos()), ""});
        return new Table("JVM start-up to exit, " + startup.runs() + " runs each, alternating, unpinned", rows);
    }

    private static String pair(double a, double b) {
        return Report.num(a) + " / " + Report.num(b);
    }

    private static String[] head(String first, int[] sizes) {
        String[] h = new String[sizes.length + 1];
        h[0] = first;
        for (int i = 0; i < sizes.length; i++) {
            h[i + 1] = Sweep.label(sizes[i]);
        }
        return h;
    }
}
