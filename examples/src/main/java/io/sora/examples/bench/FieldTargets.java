package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The open issues' targets that the field rows measure, each with this run's figure and a verdict:
 * {@code met}, or {@code missed by} the factor between the target and the figure. The figures are the
 * report's own (the median over pairs of the pair-by-pair ratio, or of the per-pair medians); a target
 * whose row did not run is left out. The issues' other targets are read elsewhere: H2's and HTTP's in
 * the apps report, streaming and RDMA in the pinned report and the VM's.
 */
final class FieldTargets {
    private FieldTargets() {
    }

    /** What a target bounds. */
    enum Kind {
        /** The row's ratio (above 1: shm faster) is at least the bound. */
        RATIO_AT_LEAST,
        /** shm's median, in microseconds, is at most the bound. */
        SHM_MEDIAN_AT_MOST_US,
        /** shm's p99 over its median is at most the bound. */
        SHM_P99_OVER_MEDIAN_AT_MOST,
        /** shm's median over the bare floor's is at most the bound. */
        SHM_OVER_FLOOR_AT_MOST
    }

    record Target(String issue, String what, String row, String setting, Kind kind, double bound) {
    }

    /** The targets, as the issues state them; where a row measures a neighbour of the setting, the name says so. */
    static final List<Target> TARGETS = List.of(
            new Target("10", "4 KiB ping-pong, unpinned: shm >= 3x faster than TCP", "pp4k", "unpinned", Kind.RATIO_AT_LEAST, 3),
            new Target("10", "JSOR sample from cold JVMs, 1,000 x 4 KiB: shm >= 1.5x faster (its round trips)", "sample-cold",
                    "unpinned", Kind.RATIO_AT_LEAST, 1.5),
            new Target("10", "4 KiB ping-pong, both on one CPU: shm >= 1.25x faster", "pp4k", "same", Kind.RATIO_AT_LEAST, 1.25),
            new Target("10", "think time per round trip, split: shm adds <= 6 us over it (the row's T = 20 us; the issue's 15 us)",
                    "think", "T=20 µs, split", Kind.SHM_MEDIAN_AT_MOST_US, 6),
            new Target("10", "tight ping-pong, split: <= 1.2x the floor", "pp4k", "split", Kind.SHM_OVER_FLOOR_AT_MOST, 1.2),
            new Target("10", "p99, 4 KiB, split: <= 5x the median", "pp4k", "split", Kind.SHM_P99_OVER_MEDIAN_AT_MOST, 5),
            new Target("11", "NIO 4 KiB ping-pong, selector server, unpinned: >= 3x faster", "nio",
                    "selector server, 1 conn, unpinned", Kind.RATIO_AT_LEAST, 3),
            new Target("11", "selector server, 16 clients, 4 KiB requests: >= 2x TCP's throughput", "nio",
                    "selector server, 16 conns, unpinned", Kind.RATIO_AT_LEAST, 2),
            new Target("13", "shm connection set-up, both attached: <= 2x TCP's time", "setup", "both attached, unpinned",
                    Kind.RATIO_AT_LEAST, 0.5),
            new Target("13", "shm connection set-up, both attached, selector server: <= 2x TCP's time", "setup",
                    "both attached, selector server, unpinned", Kind.RATIO_AT_LEAST, 0.5),
            new Target("13", "accept() for a client without sora, server with an accept rule: <= 3 ms", "setup",
                    "accept, client without sora, unpinned", Kind.SHM_MEDIAN_AT_MOST_US, 3000));

    /** One line per target whose row ran: issue, target, figure, verdict. */
    static List<String[]> table(List<FieldCase> cases) {
        List<String[]> t = new ArrayList<>();
        t.add(new String[] {"issue", "target", "this run", "verdict"});
        for (Target target : TARGETS) {
            FieldCase c = find(cases, target);
            if (c == null) continue;
            double v = figure(c, target.kind());
            t.add(new String[] {"#" + target.issue(), target.what(), format(v, target.kind()), verdict(v, target)});
        }
        return t.size() > 1 ? t : null;
    }

    /** The same as data, for field.json. */
    static List<Object> json(List<FieldCase> cases) {
        List<Object> out = new ArrayList<>();
        for (Target target : TARGETS) {
            FieldCase c = find(cases, target);
            if (c == null) continue;
            double v = figure(c, target.kind());
            out.add(Map.of("issue", target.issue(), "target", target.what(), "row", target.row(), "setting", target.setting(),
                    "kind", target.kind().name(), "bound", target.bound(), "figure", Double.isNaN(v) ? "NaN" : v,
                    "verdict", verdict(v, target)));
        }
        return out;
    }

    private static FieldCase find(List<FieldCase> cases, Target target) {
        for (FieldCase c : cases) {
            if (c.row.equals(target.row()) && c.setting.equals(target.setting())) return c;
        }
        return null;
    }

    static double figure(FieldCase c, Kind kind) {
        return switch (kind) {
            case RATIO_AT_LEAST -> c.ratio().median();
            case SHM_MEDIAN_AT_MOST_US -> FieldCase.medianOfMedians(c.shm) / 1000;
            case SHM_P99_OVER_MEDIAN_AT_MOST -> FieldCase.medianOfP99(c.shm) / FieldCase.medianOfMedians(c.shm);
            case SHM_OVER_FLOOR_AT_MOST -> c.shmOverFloor().median();
        };
    }

    static String verdict(double v, Target target) {
        if (Double.isNaN(v)) return "not measured";
        boolean atLeast = target.kind() == Kind.RATIO_AT_LEAST;
        boolean met = atLeast ? v >= target.bound() : v <= target.bound();
        if (met) return "met";
        return Report.fmt("missed by %.2fx", atLeast ? target.bound() / v : v / target.bound());
    }

    private static String format(double v, Kind kind) {
        if (Double.isNaN(v)) return "-";
        return switch (kind) {
            case RATIO_AT_LEAST -> Report.fmt("%.2fx", v);
            case SHM_MEDIAN_AT_MOST_US -> Report.fmt("%.2f us", v);
            case SHM_P99_OVER_MEDIAN_AT_MOST, SHM_OVER_FLOOR_AT_MOST -> Report.fmt("%.2fx", v);
        };
    }
}
