package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders a finished run: the header facts, one row per measured pair, and the ratios that the
 * targets speak about, as fixed-width text for the console and as Markdown. Targets are printed
 * as information next to the measured ratio; nothing here decides an exit status.
 */
final class Report {
    private final Machine machine;
    private final BenchOptions options;
    private final List<Placement> placements;
    private final List<String> notes;
    private final List<Measurement> results;

    Report(Machine machine, BenchOptions options, List<Placement> placements, List<String> notes, List<Measurement> results) {
        this.machine = machine;
        this.options = options;
        this.placements = placements;
        this.notes = notes;
        this.results = results;
    }

    List<String> header() {
        List<String> h = new ArrayList<>();
        h.add("date: " + machine.date());
        h.add("kernel: " + machine.kernel());
        h.add("cpu: " + machine.cpuModel() + "; " + machine.cpusOnline() + " CPUs online, this process may use "
                + machine.cpusAllowed());
        h.add("jdk (children): " + machine.jdk());
        h.add("pinning: " + (machine.canPin() ? "taskset -c (" + machine.taskset() + ")" : "taskset not found, processes run unpinned"));
        for (Placement p : placements) {
            h.add("placement " + p.describe());
        }
        h.add("ping-pong: " + options.size + " B messages, " + options.warmup + " warm-up round trips, then "
                + options.reps + " repetitions x " + options.iterations + " timed round trips");
        h.add("stream: " + (options.streamMib == 0 ? "off" : options.streamMib + " MiB per repetition in "
                + options.streamChunk / 1024 + " KiB writes, 1/8 of it untimed first, " + options.streamReps + " repetitions"));
        h.add("rules: server '" + Bench.rule(true, "PORT", options.ruleOptions) + "', client '"
                + Bench.rule(false, "PORT", options.ruleOptions) + "' (tcp+agent: the same naming another port)");
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

    List<String[]> table(String us) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"path", "placement", "RTT median (" + us + ")", "RTT p99 (" + us + ")",
            "rep medians min-max (" + us + ")", "stream MB/s", "stream GB/s", "stream reps min-max (GB/s)"});
        for (Measurement m : results) {
            double bps = m.streamBytesPerSecond();
            rows.add(new String[] {m.route().label, m.placement().label(), micros(m.rttMedianNs()), micros(m.get("rtt_p99_ns")),
                micros(m.get("rtt_rep_min_ns")) + " - " + micros(m.get("rtt_rep_max_ns")),
                Double.isNaN(bps) ? "-" : fmt("%.0f", bps / 1e6), Double.isNaN(bps) ? "-" : fmt("%.2f", bps / 1e9),
                Double.isNaN(bps) ? "-" : fmt("%.2f - %.2f", m.get("stream_bps_min") / 1e9, m.get("stream_bps_max") / 1e9)});
        }
        return rows;
    }

    List<String[]> ratios() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"ratio", "measured", "target (information only)", "meets target"});
        String primary = placements.get(0).label();
        Measurement tcpBest = best(Route.TCP, false);
        Measurement tcpBestStream = best(Route.TCP, true);
        ratio(rows, "shm RTT / TCP RTT, both " + primary, rtt(Route.SHM, primary), rtt(Route.TCP, primary), 1 / 20.0, true);
        if (tcpBest != null) {
            ratio(rows, "shm RTT (" + primary + ") / TCP RTT at its best placement (" + tcpBest.placement().label() + ")",
                    rtt(Route.SHM, primary), tcpBest.rttMedianNs(), 1 / 20.0, true);
        }
        ratio(rows, "shm RTT / floor RTT, both " + primary, rtt(Route.SHM, primary), rtt(Route.FLOOR, primary), 2, true);
        ratio(rows, "shm stream / TCP stream, both " + primary, bps(Route.SHM, primary), bps(Route.TCP, primary), 4, false);
        if (tcpBestStream != null) {
            ratio(rows, "shm stream (" + primary + ") / TCP stream at its best placement (" + tcpBestStream.placement().label() + ")",
                    bps(Route.SHM, primary), tcpBestStream.streamBytesPerSecond(), 4, false);
        }
        for (Placement p : placements) {
            overhead(rows, "agent without matching rule: RTT overhead, " + p.label(), rtt(Route.TCP_AGENT, p.label()), rtt(Route.TCP, p.label()), true);
        }
        for (Placement p : placements) {
            overhead(rows, "agent without matching rule: stream throughput change, " + p.label(),
                    bps(Route.TCP_AGENT, p.label()), bps(Route.TCP, p.label()), false);
        }
        for (Placement p : placements.subList(1, placements.size())) {
            ratio(rows, "shm RTT / TCP RTT, both " + p.label(), rtt(Route.SHM, p.label()), rtt(Route.TCP, p.label()), Double.NaN, true);
        }
        return rows;
    }

    /** A ratio row; {@code atMost} says whether the target is an upper (RTT) or lower (throughput) bound. */
    private static void ratio(List<String[]> rows, String name, double num, double den, double target, boolean atMost) {
        double r = num / den;
        String measured = Double.isNaN(r) ? "n/a (not run)" : r < 1 ? fmt("%.3f (1/%.1f)", r, 1 / r) : fmt("%.2fx", r);
        String t = Double.isNaN(target) ? "(no target)" : atMost
                ? (target < 1 ? fmt("<= 1/%.0f (%.3f)", 1 / target, target) : fmt("<= %.0fx", target))
                : fmt(">= %.0fx", target);
        String verdict = Double.isNaN(r) || Double.isNaN(target) ? "-" : (atMost ? r <= target : r >= target) ? "yes" : "no";
        rows.add(new String[] {name, measured, t, verdict});
    }

    /** Signed percentage of {@code agent} over {@code base}; the target is at most +3 % for RTT. */
    private static void overhead(List<String[]> rows, String name, double agent, double base, boolean targeted) {
        double pct = (agent / base - 1) * 100;
        String measured = Double.isNaN(pct) ? "n/a (not run)" : fmt("%+.1f %%", pct);
        String verdict = !targeted || Double.isNaN(pct) ? "-" : pct <= 3 ? "yes" : "no";
        rows.add(new String[] {name, measured, targeted ? "<= 3 %" : "(no target)", verdict});
    }

    private Measurement find(Route route, String placement) {
        for (Measurement m : results) {
            if (m.route() == route && m.placement().label().equals(placement)) {
                return m;
            }
        }
        return null;
    }

    private double rtt(Route route, String placement) {
        Measurement m = find(route, placement);
        return m == null ? Double.NaN : m.rttMedianNs();
    }

    private double bps(Route route, String placement) {
        Measurement m = find(route, placement);
        return m == null ? Double.NaN : m.streamBytesPerSecond();
    }

    /** The placement where a route did best: lowest RTT, or highest throughput. */
    private Measurement best(Route route, boolean stream) {
        Measurement best = null;
        for (Measurement m : results) {
            if (m.route() != route) {
                continue;
            }
            double v = stream ? m.streamBytesPerSecond() : m.rttMedianNs();
            if (Double.isNaN(v)) {
                continue;
            }
            double b = best == null ? Double.NaN : stream ? best.streamBytesPerSecond() : best.rttMedianNs();
            if (best == null || (stream ? v > b : v < b)) {
                best = m;
            }
        }
        return best;
    }

    String text() {
        StringBuilder b = new StringBuilder("== sora benchmark\n");
        header().forEach(h -> b.append("  ").append(h).append('\n'));
        b.append("\n== results (medians over repetitions; MB = 10^6 B, GB = 10^9 B)\n");
        fixed(b, table("us"));
        b.append("\n== ratios from this run\n");
        fixed(b, ratios());
        return b.toString();
    }

    String markdown() {
        StringBuilder b = new StringBuilder("## sora benchmark run\n\n");
        header().forEach(h -> b.append("- ").append(h).append('\n'));
        b.append("\n### Results (medians over repetitions; MB = 10^6 B, GB = 10^9 B)\n\n");
        markdown(b, table("µs"));
        b.append("\n### Ratios from this run\n\n");
        markdown(b, ratios());
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
                b.append(' ').append(i == 0 ? pad(r[i], w[i], false) : pad(r[i], w[i], true)).append(' ');
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

    static String micros(double ns) {
        if (Double.isNaN(ns)) {
            return "-";
        }
        double us = ns / 1000;
        return us < 10 ? fmt("%.2f", us) : fmt("%.1f", us);
    }

    static String fmt(String f, Object... args) {
        return String.format(Locale.ROOT, f, args);
    }
}
