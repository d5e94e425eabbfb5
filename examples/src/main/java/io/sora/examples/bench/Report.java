package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders a finished run: the header facts, the {@link Tables} and the {@link Ratios}, as fixed-width
 * text for the console and as Markdown for {@code report.md}. Immutable once built (the notes list is
 * the driver's and may grow until the final report is made).
 */
final class Report {
    private final Machine machine;
    private final BenchOptions options;
    private final List<Placement> placements;
    private final List<String> notes;
    private final List<Measurement> results;
    private final Startup.Result startup;

    Report(Machine machine, BenchOptions options, List<Placement> placements, List<String> notes,
            List<Measurement> results, Startup.Result startup) {
        this.machine = machine;
        this.options = options;
        this.placements = placements;
        this.notes = notes;
        this.results = results;
        this.startup = startup;
    }

    Machine machine() {
        return machine;
    }

    List<Measurement> results() {
        return results;
    }

    Startup.Result startup() {
        return startup;
    }

    List<Placement> placements() {
        return placements;
    }

    List<String> header() {
        List<String> h = new ArrayList<>();
        h.add("date: " + machine.date());
        h.add("kernel: " + machine.kernel());
        h.add("cpu: " + machine.cpuModel() + "; " + machine.cpusOnline() + " CPUs online, the driver may use "
                + machine.cpusAllowed() + "; " + machine.memory() + " memory; "
                + (machine.virtualised() ? "a virtual machine (hypervisor flag set)" : "no hypervisor flag"));
        h.add("jdk (children): " + machine.jdk());
        h.add("pinning: " + (machine.canPin() ? "taskset -c (" + machine.taskset() + ")" : "taskset not found, processes run unpinned"));
        for (Placement p : placements) {
            h.add("placement " + p.describe());
        }
        h.add("ping-pong: sizes " + labels(options.sizes) + "; " + options.warmup + " warm-up round trips before the first"
                + " size; per size " + options.reps + " repetitions of up to " + options.iterations + " round trips (at most "
                + options.ppMib + " MiB a repetition, at least " + Sweep.MIN_ITERATIONS + " round trips)");
        h.add("stream: write sizes " + labels(options.writeSizes) + "; per size one untimed pass, then "
                + options.streamReps + " repetitions of about " + options.streamMs + " ms (at most " + options.streamMaxMib
                + " MiB each)");
        h.add("file copy: " + (options.copyMib == 0 ? "off" : Sweep.label(options.copyBytes()) + " file x "
                + options.copyReps + " copies in " + Sweep.label(options.copyChunk) + " chunks"));
        for (Route r : new Route[] {Route.SHM, Route.SHM_1M}) {
            h.add("rules " + r.label + ": server '" + Bench.rule(r.provider, true, "127.0.0.1", "PORT", ruleOptions(r))
                    + "', client '" + Bench.rule(r.provider, false, "127.0.0.1", "PORT", ruleOptions(r)) + "'");
        }
        h.add("rules tcp+agent: as shm, naming PORT+1, so nothing matches");
        if (!options.jvmArgs.isEmpty()) {
            h.add("extra JVM options (every child): " + String.join(" ", options.jvmArgs));
        }
        if (options.agentOptions != null) {
            h.add("extra agent options: " + options.agentOptions);
        }
        h.add("arguments: " + (options.args.isEmpty() ? "(none)" : String.join(" ", options.args)));
        notes.forEach(n -> h.add("note: " + n));
        return h;
    }

    private String ruleOptions(Route r) {
        return (r.ruleOptions + " " + options.ruleOptions).trim();
    }

    List<Tables.Table> tables(String us) {
        List<Tables.Table> t = new ArrayList<>(new Tables(options, results, startup).all(us));
        if (!options.peers.isEmpty()) {
            t.add(0, PeerRow.table(results, options.peers, closest(options.sizes, 4096), closest(options.writeSizes, 65536), us));
        }
        return t;
    }

    List<String[]> ratios() {
        return new Ratios(options, placements, results, startup).rows();
    }

    String text() {
        StringBuilder b = new StringBuilder("== sora benchmark\n");
        header().forEach(h -> b.append("  ").append(h).append('\n'));
        for (Tables.Table t : tables("us")) {
            b.append("\n== ").append(t.title()).append('\n');
            fixed(b, t.rows());
        }
        b.append("\n== ratios from this run (targets are information; MB = 10^6 B)\n");
        fixed(b, ratios());
        return b.toString();
    }

    /** The Markdown report; {@code charts} are image files (relative names) to embed, with their captions. */
    String markdown(List<String[]> charts) {
        StringBuilder b = new StringBuilder("# sora benchmark report\n\n");
        b.append("Produced by `./sora bench` (`io.sora.examples.bench.Bench`); the figures are in `results.json`.\n")
                .append("Method and the meaning of every row: `docs/benchmarks.md` in the repository.\n\n");
        b.append("## Machine and run\n\n");
        header().forEach(h -> b.append("- ").append(h).append('\n'));
        if (!charts.isEmpty()) {
            b.append("\n## Charts\n\n");
            for (String[] c : charts) {
                b.append("![").append(c[1]).append("](").append(c[0]).append(")\n\n");
            }
        }
        b.append("\n## Ratios and targets (MB = 10^6 B)\n\n");
        markdown(b, ratios());
        for (Tables.Table t : tables("µs")) {
            b.append("\n## ").append(t.title()).append("\n\n");
            markdown(b, t.rows());
        }
        return b.toString();
    }

    private static void fixed(StringBuilder b, List<String[]> rows) {
        int[] w = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        for (int k = 0; k < rows.size(); k++) {
            String[] r = rows.get(k);
            b.append(' ');
            for (int i = 0; i < r.length; i++) {
                b.append(' ').append(pad(r[i], w[i], i > 0)).append(' ');
            }
            b.append('\n');
            if (k == 0) {
                b.append(' ');
                for (int width : w) {
                    b.append(' ').append("-".repeat(width)).append(' ');
                }
                b.append('\n');
            }
        }
    }

    private static void markdown(StringBuilder b, List<String[]> rows) {
        for (int k = 0; k < rows.size(); k++) {
            b.append("| ").append(String.join(" | ", rows.get(k))).append(" |\n");
            if (k == 0) {
                b.append("|").append(" --- |".repeat(rows.get(0).length)).append('\n');
            }
        }
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(Math.max(0, width - s.length()));
        return right ? fill + s : s + fill;
    }

    private static String labels(int[] sizes) {
        StringBuilder b = new StringBuilder();
        for (int s : sizes) {
            b.append(b.length() == 0 ? "" : ", ").append(Sweep.label(s));
        }
        return b.toString();
    }

    /** The size in {@code sizes} nearest to {@code want} (the headline size when the sweep lacks it). */
    static int closest(int[] sizes, int want) {
        int best = sizes[0];
        for (int s : sizes) {
            if (Math.abs(Math.log((double) s / want)) < Math.abs(Math.log((double) best / want))) {
                best = s;
            }
        }
        return best;
    }

    static String micros(double ns) {
        if (Double.isNaN(ns)) {
            return "-";
        }
        double us = ns / 1000;
        return us < 10 ? fmt("%.2f", us) : us < 1000 ? fmt("%.1f", us) : fmt("%.0f", us);
    }

    static String mbps(double bps) {
        if (Double.isNaN(bps)) {
            return "-";
        }
        double mb = bps / 1e6;
        return mb < 10 ? fmt("%.2f", mb) : mb < 100 ? fmt("%.1f", mb) : fmt("%.0f", mb);
    }

    static String millis(long ns) {
        return fmt("%.0f", ns / 1e6);
    }

    /** A cost figure: three significant digits, "-" when unknown. */
    static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        return a == 0 ? "0" : a < 1 ? fmt("%.3f", v) : a < 10 ? fmt("%.2f", v) : a < 100 ? fmt("%.1f", v) : fmt("%.0f", v);
    }

    static String fmt(String f, Object... args) {
        return String.format(Locale.ROOT, f, args);
    }
}
