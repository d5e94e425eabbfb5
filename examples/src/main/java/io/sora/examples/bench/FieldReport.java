package io.sora.examples.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The field benchmark's tables (Markdown, on the console and in {@code field.md}) and its
 * {@code field.json}: figures and ratios (above 1: shm was faster), then the open issues' targets these
 * rows measure with a verdict each ({@link FieldTargets}). Immutable once built.
 */
final class FieldReport {
    private final Machine machine;
    private final FieldOptions options;
    private final List<FieldCase> cases;
    private final List<String> notes;
    private final String loadStart;
    private final String loadEnd;
    private final double seconds;

    FieldReport(Machine machine, FieldOptions options, List<FieldCase> cases, List<String> notes, String loadStart,
            String loadEnd, double seconds) {
        this.machine = machine;
        this.options = options;
        this.cases = cases;
        this.notes = notes;
        this.loadStart = loadStart;
        this.loadEnd = loadEnd;
        this.seconds = seconds;
    }

    List<String> header() {
        List<String> h = new ArrayList<>();
        h.add("date: " + machine.date());
        h.add("machine: " + machine.cpuModel() + ", " + machine.cpusOnline() + " CPUs online, usable " + machine.cpusAllowed()
                + ", " + machine.memory() + (machine.virtualised() ? ", virtual machine (hypervisor flag)" : "")
                + ", kernel " + machine.kernel());
        h.add("JDK (children): " + machine.jdk());
        h.add("load average (1/5/15 min): at start " + loadStart + ", at end " + loadEnd);
        h.add(Report.fmt("pairs per setting: %d (tcp and shm alternating, tcp first)%s; the run took %.0f s", options.pairs,
                options.quick ? ", --quick" : "", seconds));
        h.add("shm rules: `shm accept 127.0.0.1 PORT 127.0.0.1" + opt() + "` (server), `shm connect 127.0.0.1 PORT" + opt()
                + "` (client); sample-cold: the demo's rules, no options");
        h.add("tcp: no agent at all; every round trip timed from the first after connect (no warm-up), 4 KiB messages");
        return h;
    }

    private String opt() {
        return options.ruleOptions.isEmpty() ? "" : " " + options.ruleOptions;
    }

    /** The verdict table: one line per row and setting, the headline figure of each path and the ratio. */
    List<String[]> verdict() {
        List<String[]> t = new ArrayList<>();
        t.add(new String[] {"row", "setting", "tcp median", "shm median", "ratio (median; >1 = shm faster)", "spread (min–max)",
            "pairs"});
        for (FieldCase c : cases) {
            FieldStats.Summary r = c.ratio();
            t.add(new String[] {c.row, c.setting, headline(c, c.tcp), headline(c, c.shm) + fellBack(c),
                ratio(r.median()) + (c.throughput ? " (throughput)" : ""), spread(r), pairs(c, r)});
        }
        return t;
    }

    /** shm against the bare floor, for the cases that ran it. */
    List<String[]> floorTable() {
        List<String[]> t = new ArrayList<>();
        t.add(new String[] {"row", "setting", "floor median", "floor p99", "shm median", "shm / floor (median)",
            "spread (min–max)"});
        for (FieldCase c : cases) {
            if (c.floor.isEmpty()) {
                continue;
            }
            FieldStats.Summary r = c.shmOverFloor();
            t.add(new String[] {c.row, c.setting, us(FieldCase.medianOfMedians(c.floor)), us(FieldCase.medianOfP99(c.floor)),
                us(FieldCase.medianOfMedians(c.shm)), ratio(r.median()), spread(r)});
        }
        return t.size() > 1 ? t : null;
    }

    /** The detail table of one row (its own columns), or null if the row did not run. */
    List<String[]> detail(String row) {
        List<FieldCase> of = cases.stream().filter(c -> c.row.equals(row)).toList();
        if (of.isEmpty()) {
            return null;
        }
        List<String[]> t = new ArrayList<>();
        switch (row) {
            case "sample-cold" -> {
                t.add(new String[] {"setting", "tcp (per round trip; whole pair: launch to exit)", "shm", "ratio", "spread",
                    "shm pairs that ran on shm (trace)"});
                for (FieldCase c : of) {
                    FieldStats.Summary r = c.ratio();
                    t.add(new String[] {c.setting, us(FieldCase.medianOfMedians(c.tcp)), us(FieldCase.medianOfMedians(c.shm)),
                        ratio(r.median()), spread(r), c.shmOnPath() + " of " + c.shm.size()});
                }
            }
            case "think" -> {
                t.add(new String[] {"setting", "tcp median", "tcp p99", "shm median = added over think time", "shm p99",
                    "ratio", "spread", "think time measured (mean, tcp / shm)"});
                for (FieldCase c : of) {
                    FieldStats.Summary r = c.ratio();
                    t.add(new String[] {c.setting, us(FieldCase.medianOfMedians(c.tcp)), us(FieldCase.medianOfP99(c.tcp)),
                        us(FieldCase.medianOfMedians(c.shm)), us(FieldCase.medianOfP99(c.shm)), ratio(r.median()), spread(r),
                        us(value(c.tcp, "think_mean_ns")) + " / " + us(value(c.shm, "think_mean_ns"))});
                }
            }
            case "conns" -> {
                t.add(new String[] {"setting", "tcp round trips/s", "shm round trips/s", "ratio shm/tcp (throughput)", "spread",
                    "tcp median / p99", "shm median / p99"});
                for (FieldCase c : of) {
                    FieldStats.Summary r = c.ratio();
                    t.add(new String[] {c.setting, rate(FieldCase.medianRtps(c.tcp)), rate(FieldCase.medianRtps(c.shm)),
                        ratio(r.median()), spread(r),
                        us(FieldCase.medianOfMedians(c.tcp)) + " / " + us(FieldCase.medianOfP99(c.tcp)),
                        us(FieldCase.medianOfMedians(c.shm)) + " / " + us(FieldCase.medianOfP99(c.shm))});
                }
            }
            case "setup" -> {
                t.add(new String[] {"setting", "tcp median", "tcp p99", "shm median", "shm p99", "ratio", "spread",
                    "first connection (tcp / shm)", "CPU per connection, both processes, 2nd half (tcp / shm)",
                    "of which application threads / JIT compilers (tcp; shm)"});
                for (FieldCase c : of) {
                    FieldStats.Summary r = c.ratio();
                    t.add(new String[] {c.setting, us(FieldCase.medianOfMedians(c.tcp)), us(FieldCase.medianOfP99(c.tcp)),
                        us(FieldCase.medianOfMedians(c.shm)), us(FieldCase.medianOfP99(c.shm)), ratio(r.median()), spread(r),
                        us(value(c.tcp, "first_ns")) + " / " + us(value(c.shm, "first_ns")),
                        us(value(c.tcp, "cpu_ns_per_conn")) + " / " + us(value(c.shm, "cpu_ns_per_conn")),
                        byKind(c.tcp) + "; " + byKind(c.shm)});
                }
            }
            default -> {
                t.add(new String[] {"setting", "tcp median", "tcp p99", "shm median", "shm p99", "ratio", "spread",
                    "first round trip (tcp / shm)"});
                for (FieldCase c : of) {
                    FieldStats.Summary r = c.ratio();
                    t.add(new String[] {c.setting, us(FieldCase.medianOfMedians(c.tcp)), us(FieldCase.medianOfP99(c.tcp)),
                        us(FieldCase.medianOfMedians(c.shm)), us(FieldCase.medianOfP99(c.shm)), ratio(r.median()), spread(r),
                        us(value(c.tcp, "first_ns")) + " / " + us(value(c.shm, "first_ns"))});
                }
            }
        }
        return t;
    }

    /** Every pair of one case: both paths' figures and the pair's ratio. */
    List<String[]> perPair(FieldCase c) {
        List<String[]> t = new ArrayList<>();
        boolean floor = !c.floor.isEmpty();
        List<String> head = new ArrayList<>(List.of("pair", "tcp median", "tcp p99", "shm median", "shm p99"));
        if (c.throughput) {
            head.addAll(List.of("tcp round trips/s", "shm round trips/s"));
        }
        if (floor) {
            head.add("floor median");
        }
        head.addAll(List.of("ratio", "shm ran on"));
        t.add(head.toArray(new String[0]));
        double[] ratios = c.ratios();
        for (int i = 0; i < c.tcp.size(); i++) {
            FieldCase.Run tcp = c.tcp.get(i);
            FieldCase.Run shm = c.shm.get(i);
            List<String> r = new ArrayList<>(List.of(Integer.toString(tcp.pair()), us(tcp.medianNs()), us(tcp.p99Ns()),
                    us(shm.medianNs()), us(shm.p99Ns())));
            if (c.throughput) {
                r.addAll(List.of(rate(tcp.rtps()), rate(shm.rtps())));
            }
            if (floor) {
                r.add(i < c.floor.size() ? us(c.floor.get(i).medianNs()) : "-");
            }
            r.addAll(List.of(ratio(ratios[i]), shm.actualPath()));
            t.add(r.toArray(new String[0]));
        }
        return t;
    }

    String console() {
        StringBuilder b = new StringBuilder("== sora field benchmark: verdict (figures only; ratio > 1 = shm faster)\n\n");
        markdown(b, verdict());
        List<String[]> f = floorTable();
        if (f != null) {
            b.append("\nshm against the bare floor (FloorPingPong, a spin over a mapped file, same round trips):\n\n");
            markdown(b, f);
        }
        List<String[]> targets = FieldTargets.table(cases);
        if (targets != null) {
            b.append("\n== the open issues' targets these rows measure\n\n");
            markdown(b, targets);
        }
        for (String row : FieldOptions.ROWS) {
            List<String[]> d = detail(row);
            if (d != null) {
                b.append("\n== ").append(title(row)).append("\n\n");
                markdown(b, d);
            }
        }
        b.append('\n');
        header().forEach(h -> b.append("  ").append(h).append('\n'));
        notes.forEach(n -> b.append("  note: ").append(n).append('\n'));
        return b.toString();
    }

    String markdown() {
        StringBuilder b = new StringBuilder("# sora field benchmark\n\n");
        b.append("sora as users run it, as a ratio to TCP measured in the same run (`io.sora.examples.bench.FieldBench`, ")
                .append("`./sora bench --field`). Ratio > 1 means shm was faster; the ratio is taken per adjacent tcp/shm ")
                .append("pair, then the median of those ratios; the spread is their min–max. Method: `docs/benchmarks.md`, ")
                .append("\"Field rows: as users run it\". Every figure: `field.json`.\n\n");
        b.append("## Verdict\n\n");
        markdown(b, verdict());
        List<String[]> f = floorTable();
        if (f != null) {
            b.append("\nshm against the bare floor (FloorPingPong, a spin over a mapped file, same round trips, no warm-up):\n\n");
            markdown(b, f);
        }
        List<String[]> targets = FieldTargets.table(cases);
        if (targets != null) {
            b.append("\n## Targets\n\nThe open issues' targets that these rows measure, with this run's figure: `met`, or `missed by` ")
                    .append("the factor between target and figure. H2's and HTTP's are read in the apps report, streaming and ")
                    .append("RDMA in the pinned report and the VM's (docs/benchmarks.md).\n\n");
            markdown(b, targets);
        }
        b.append("\n## Machine and run\n\n");
        header().forEach(h -> b.append("- ").append(h).append('\n'));
        notes.forEach(n -> b.append("- note: ").append(n).append('\n'));
        for (String row : FieldOptions.ROWS) {
            List<String[]> d = detail(row);
            if (d == null) {
                continue;
            }
            b.append("\n## ").append(title(row)).append("\n\n");
            markdown(b, d);
            for (FieldCase c : cases) {
                if (c.row.equals(row)) {
                    b.append("\nPer pair, ").append(c.row).append(", ").append(c.setting).append(":\n\n");
                    markdown(b, perPair(c));
                }
            }
        }
        return b.toString();
    }

    void write(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("field.md"), markdown(), StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("field.json"), Json.write(json()), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the field report to " + dir, e);
        }
    }

    Map<String, Object> json() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", "sora-field/1");
        doc.put("machine", map("date", machine.date(), "kernel", machine.kernel(), "cpu", machine.cpuModel(),
                "cpus_online", machine.cpusOnline(), "cpus_allowed", machine.cpusAllowed(), "memory", machine.memory(),
                "virtualised", machine.virtualised(), "jdk", machine.jdk(), "taskset", machine.taskset(),
                "load_average_start", loadStart, "load_average_end", loadEnd, "seconds", seconds));
        doc.put("options", map("pairs", options.pairs, "quick", options.quick, "rows", List.copyOf(options.rows),
                "placements", List.copyOf(options.placements), "rule_options", options.ruleOptions,
                "timeout_s", options.timeoutSeconds, "args", options.args));
        doc.put("notes", notes);
        List<Object> out = new ArrayList<>();
        for (FieldCase c : cases) {
            FieldStats.Summary r = c.ratio();
            FieldStats.Summary fl = c.shmOverFloor();
            Map<String, Object> summary = map("tcp_median_us", us1(FieldCase.medianOfMedians(c.tcp)),
                    "tcp_p99_us", us1(FieldCase.medianOfP99(c.tcp)), "shm_median_us", us1(FieldCase.medianOfMedians(c.shm)),
                    "shm_p99_us", us1(FieldCase.medianOfP99(c.shm)), "tcp_rtps", FieldCase.medianRtps(c.tcp),
                    "shm_rtps", FieldCase.medianRtps(c.shm), "ratio_of", c.throughput ? "shm_rtps/tcp_rtps" : "tcp_median/shm_median",
                    "ratio_median", r.median(), "ratio_min", r.min(), "ratio_max", r.max(), "ratios_counted", r.count(),
                    "pair_ratios", boxed(c.ratios()), "shm_pairs_on_shm", c.shmOnPath(), "pairs", c.tcp.size());
            if (!c.floor.isEmpty()) {
                summary.put("floor_median_us", us1(FieldCase.medianOfMedians(c.floor)));
                summary.put("floor_p99_us", us1(FieldCase.medianOfP99(c.floor)));
                summary.put("shm_over_floor_median", fl.median());
                summary.put("shm_over_floor_min", fl.min());
                summary.put("shm_over_floor_max", fl.max());
            }
            List<Object> runs = new ArrayList<>();
            for (List<FieldCase.Run> list : List.of(c.tcp, c.shm, c.floor)) {
                for (FieldCase.Run run : list) {
                    runs.add(map("pair", run.pair(), "path", run.path(), "ran_on", run.actualPath(), "on_path", run.onPath(),
                            "median_us", us1(run.medianNs()), "p99_us", us1(run.p99Ns()), "rtps", run.rtps(),
                            "seconds", run.seconds(), "raw", new LinkedHashMap<String, Object>(run.values())));
                }
            }
            out.add(map("row", c.row, "setting", c.setting, "placement", c.placement, "params", c.params,
                    "summary", summary, "runs", runs));
        }
        doc.put("cases", out);
        doc.put("verdict", verdict());
        doc.put("targets", FieldTargets.json(cases));
        return doc;
    }

    private static String title(String row) {
        return switch (row) {
            case "pp4k" -> "pp4k: 4 KiB ping-pong from the first round trip, fresh JVMs";
            case "sample-cold" -> "sample-cold: the JSOR article's sample (1000 x 4 KiB) in cold JVMs, demo rules";
            case "think" -> "think: 4 KiB ping-pong, the client computes T µs between round trips (not timed)";
            case "conns" -> "conns: concurrent connections from one client JVM, one thread each";
            case "hog" -> "hog: 4 KiB ping-pong while one thread of another process computes without pause";
            case "setup" -> "setup: connections one after another, each timed from new Socket() to its first 1-byte answer;"
                    + " 'accept' = a client without sora against a server with an shm accept rule (the shm column);"
                    + " CPU = user + system time of every thread of both processes (the JIT's included) per connection,"
                    + " over the second half of each run";
            default -> row;
        };
    }

    /** The figure a case is judged by: median latency, or round trips a second. */
    private static String headline(FieldCase c, List<FieldCase.Run> runs) {
        return c.throughput ? rate(FieldCase.medianRtps(runs)) : us(FieldCase.medianOfMedians(runs));
    }

    private static String fellBack(FieldCase c) {
        int on = c.shmOnPath();
        return on == c.shm.size() ? "" : " (" + (c.shm.size() - on) + " of " + c.shm.size() + " pairs fell back to tcp)";
    }

    private static String pairs(FieldCase c, FieldStats.Summary r) {
        return r.count() == c.tcp.size() ? Integer.toString(r.count()) : r.count() + " of " + c.tcp.size();
    }

    /**
     * The application threads' and the JIT compilers' CPU per connection of both processes (medians over the
     * runs, from the churn client's {@code cpu_us_per_conn_by_thread}): where a cold connection's set-up goes.
     */
    private static String byKind(List<FieldCase.Run> runs) {
        return us(kindMedian(runs, ".app") * 1000) + " / " + us(kindMedian(runs, ".jit") * 1000);
    }

    /** Median over the runs of {@link #kindSum} for {@code kind}, in microseconds. */
    private static double kindMedian(List<FieldCase.Run> runs, String kind) {
        return FieldStats.median(FieldCase.values(runs, r -> kindSum(r.values().get("cpu_us_per_conn_by_thread"), kind)));
    }

    /** The sum of the {@code side.kind:us} entries ending in {@code kind}; NaN when there are none. */
    static double kindSum(String byThread, String kind) {
        if (byThread == null || byThread.equals("-")) return Double.NaN;
        double sum = 0;
        boolean any = false;
        for (String e : byThread.split(",")) {
            int colon = e.indexOf(':');
            if (colon < 0 || !e.substring(0, colon).endsWith(kind)) continue;
            try {
                sum += Double.parseDouble(e.substring(colon + 1));
                any = true;
            } catch (NumberFormatException bad) {
                // a malformed entry: left out
            }
        }
        return any ? sum : Double.NaN;
    }

    /** Median over pairs of one raw figure of the runs that ran on their path. */
    private static double value(List<FieldCase.Run> runs, String key) {
        return FieldStats.median(FieldCase.values(runs, r -> {
            String v = r.values().get(key);
            return v == null ? Double.NaN : Double.parseDouble(v);
        }));
    }

    static String us(double ns) {
        if (ns >= 100e6) return Report.fmt("%.0f ms", ns / 1e6); // whole processes (sample-cold, whole pair)
        return Double.isNaN(ns) ? "-" : Report.micros(ns) + " µs";
    }

    static String rate(double rtps) {
        return Double.isNaN(rtps) ? "-" : Report.fmt("%,.0f/s", rtps);
    }

    static String ratio(double r) {
        return Double.isNaN(r) ? "-" : Report.fmt("%.2fx", r);
    }

    static String spread(FieldStats.Summary s) {
        return s.count() == 0 ? "-" : Report.fmt("%.2f–%.2f", s.min(), s.max());
    }

    private static double us1(double ns) {
        return ns / 1e3;
    }

    private static List<Object> boxed(double[] v) {
        List<Object> l = new ArrayList<>();
        for (double d : v) {
            l.add(d);
        }
        return l;
    }

    static void markdown(StringBuilder b, List<String[]> rows) {
        for (int k = 0; k < rows.size(); k++) {
            b.append("| ").append(String.join(" | ", rows.get(k))).append(" |\n");
            if (k == 0) {
                b.append("|").append(" --- |".repeat(rows.get(0).length)).append('\n');
            }
        }
    }

    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }
}
