package io.sora.examples.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Writes a run's report directory: {@code results.json} (every figure, the tables and the ratios),
 * then the charts through the chart script ({@code tools/bench/charts.sh DIR}, which draws
 * {@code rtt.svg/png}, {@code stream.svg/png}, {@code cpu.svg/png} and {@code index.html} with
 * matplotlib), then {@code report.md} embedding whichever charts exist. A missing or failing chart
 * script costs only the charts; the reason is printed. Used by the driver's thread.
 */
final class ReportFiles {
    /** Chart files the script draws, with their captions, in the order the report shows them. */
    static final String[][] CHARTS = {
        {"rtt.svg", "Ping-pong round trip (median) against message size, one line per path"},
        {"stream.svg", "One-way streaming throughput against write size, one line per path"},
        {"cpu.svg", "CPU time per KiB moved (client + server) when streaming, against write size"},
    };
    private static final long CHART_SECONDS = 600;

    private ReportFiles() {
    }

    static void write(Path dir, Report report, BenchOptions options) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("results.json"), Json.write(ResultsJson.of(report, options)), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report to " + dir, e);
        }
        if (options.drawCharts) {
            drawCharts(dir, options.charts);
        }
        List<String[]> charts = new ArrayList<>();
        for (String[] c : CHARTS) {
            if (Files.isRegularFile(dir.resolve(c[0]))) {
                charts.add(c);
            }
        }
        try {
            Files.writeString(dir.resolve("report.md"), report.markdown(charts), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve("report.md"), e);
        }
        System.out.println("\n== report: " + dir.resolve("report.md") + (charts.isEmpty() ? " (no charts)"
                : ", charts and " + dir.resolve("index.html")) + ", figures in " + dir.resolve("results.json"));
    }

    private static void drawCharts(Path dir, String script) {
        Path s = script != null ? Path.of(script) : findScript();
        if (s == null || !Files.isRegularFile(s)) {
            System.out.println("\n== charts skipped: chart script " + (s == null ? "tools/bench/charts.sh not found"
                    : s + " not found") + " (run from the repository root, or give --charts)");
            return;
        }
        System.out.println("\n== charts: " + s + " " + dir + " (the first run creates a Python venv with matplotlib)");
        try {
            Process p = new ProcessBuilder("bash", s.toString(), dir.toString()).inheritIO().start();
            if (!p.waitFor(CHART_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                System.out.println("== charts skipped: " + s + " took more than " + CHART_SECONDS + " s");
            } else if (p.exitValue() != 0) {
                System.out.println("== charts skipped: " + s + " exited with status " + p.exitValue());
            }
        } catch (IOException e) {
            System.out.println("== charts skipped: cannot run " + s + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code tools/bench/charts.sh} under the working directory, else next to the repository the jar is built in. */
    private static Path findScript() {
        Path here = Path.of("tools", "bench", "charts.sh");
        if (Files.isRegularFile(here)) {
            return here;
        }
        String cp = System.getProperty("java.class.path").split(File.pathSeparator)[0];
        Path jar = Path.of(cp).toAbsolutePath();
        for (Path d = jar.getParent(); d != null; d = d.getParent()) {
            Path candidate = d.resolve(here);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Builds the {@code results.json} document. */
    static final class ResultsJson {
        private ResultsJson() {
        }

        static Map<String, Object> of(Report report, BenchOptions o) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("schema", "sora-bench/1");
            doc.put("header", report.header());
            Machine m = report.machine();
            doc.put("machine", map("date", m.date(), "kernel", m.kernel(), "cpu", m.cpuModel(), "cpus_online", m.cpusOnline(),
                    "cpus_allowed", m.cpusAllowed(), "memory", m.memory(), "virtualised", m.virtualised(), "jdk", m.jdk(),
                    "pinning", m.canPin(), "load_average_now", Machine.loadAverage()));
            doc.put("options", map("sizes", o.sizes, "write_sizes", o.writeSizes, "reps", o.reps, "iterations", o.iterations,
                    "pp_mib", o.ppMib, "warmup", o.warmup, "stream_ms", o.streamMs, "stream_reps", o.streamReps,
                    "copy_mib", o.copyMib, "copy_reps", o.copyReps, "quick", o.quick, "args", o.args));
            List<Object> rows = new ArrayList<>();
            for (Measurement r : report.results()) {
                rows.add(row(r, o));
            }
            doc.put("rows", rows);
            List<Object> peers = new ArrayList<>();
            for (PeerRow p : o.peers) {
                peers.add(map("name", p.name(), "rtt_us", p.rttUs(), "mb_per_s", p.mbps()));
            }
            doc.put("external_rows", peers);
            Startup.Result s = report.startup();
            doc.put("startup", s == null ? null : map("runs", s.runs(), "without_ms", s.withoutMedian() / 1e6,
                    "with_ms", s.withMedian() / 1e6, "added_ms", s.addedNanos() / 1e6));
            List<Object> tables = new ArrayList<>();
            tables.add(map("title", "Ratios and targets", "rows", report.ratios()));
            for (Tables.Table t : report.tables("µs")) {
                tables.add(map("title", t.title(), "rows", t.rows()));
            }
            doc.put("tables", tables);
            return doc;
        }

        private static Map<String, Object> row(Measurement r, BenchOptions o) {
            List<Object> pp = new ArrayList<>();
            if (r.route().pingPong) {
                for (int s : o.sizes) {
                    String k = "pp." + s + ".";
                    pp.add(map("size", s, "rtt_median_us", r.pp(s, "rtt_median_ns") / 1e3, "rtt_p99_us", r.pp(s, "rtt_p99_ns") / 1e3,
                            "rtt_p999_us", r.pp(s, "rtt_p999_ns") / 1e3, "rtt_rep_min_us", r.pp(s, "rtt_rep_min_ns") / 1e3,
                            "rtt_rep_max_us", r.pp(s, "rtt_rep_max_ns") / 1e3, "samples", r.pp(s, "samples"),
                            "mb_per_s", r.pp(s, "bps") / 1e6, "cpu_client_ns_per_kib", r.cpuNsPerKiB(k, false),
                            "cpu_server_ns_per_kib", r.cpuNsPerKiB(k, true), "alloc_client_per_msg", r.allocPerMessage(k, false),
                            "alloc_server_per_msg", r.allocPerMessage(k, true)));
                }
            }
            List<Object> st = new ArrayList<>();
            if (r.route().streams) {
                for (int s : o.writeSizes) {
                    String k = "st." + s + ".";
                    st.add(map("size", s, "mb_per_s", r.st(s, "bps") / 1e6, "mb_per_s_min", r.st(s, "bps_min") / 1e6,
                            "mb_per_s_max", r.st(s, "bps_max") / 1e6, "writes", r.st(s, "msgs"), "bytes", r.st(s, "bytes"),
                            "cpu_client_ns_per_kib", r.cpuNsPerKiB(k, false), "cpu_server_ns_per_kib", r.cpuNsPerKiB(k, true),
                            "alloc_client_per_msg", r.allocPerMessage(k, false), "alloc_server_per_msg", r.allocPerMessage(k, true)));
                }
            }
            Object copy = Double.isNaN(r.copy("bps")) ? null : map("mb_per_s", r.copy("bps") / 1e6,
                    "mb_per_s_min", r.copy("bps_min") / 1e6, "mb_per_s_max", r.copy("bps_max") / 1e6, "bytes", r.copy("bytes"),
                    "crc32c", r.values().get("copy.crc"), "verified", "yes".equals(r.values().get("copy.verified")),
                    "cpu_client_ns_per_kib", r.cpuNsPerKiB("copy.", false), "cpu_server_ns_per_kib", r.cpuNsPerKiB("copy.", true));
            return map("path", r.route().key, "label", r.route().label, "placement", r.placement().label(),
                    "name", r.name(), "server_cpu", r.placement().serverCpu(), "client_cpu", r.placement().clientCpu(),
                    "pingpong", pp, "stream", st, "copy", copy);
        }

        private static Map<String, Object> map(Object... kv) {
            Map<String, Object> m = new LinkedHashMap<>();
            for (int i = 0; i < kv.length; i += 2) {
                m.put((String) kv[i], kv[i + 1]);
            }
            return m;
        }
    }
}
