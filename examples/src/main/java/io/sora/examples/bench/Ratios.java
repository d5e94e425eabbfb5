package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The ratios the project's targets speak about, computed from one run's measurements: shm against TCP
 * (under the fast path's placement and at TCP's best placement) and against the floor at the headline
 * message size (4 KiB), streaming at the headline write size (64 KiB), the agent's no-match overhead
 * and its start-up cost. Each row says whether the target is met and, if not, by how much it is
 * missed. Information only: nothing here decides an exit status. Immutable once built.
 */
final class Ratios {
    private final List<Measurement> results;
    private final List<Placement> placements;
    private final Startup.Result startup;
    private final int pp;
    private final int st;
    private final int[] sizes;

    Ratios(BenchOptions options, List<Placement> placements, List<Measurement> results, Startup.Result startup) {
        this.results = results;
        this.placements = placements;
        this.startup = startup;
        this.pp = Report.closest(options.sizes, 4096);
        this.st = Report.closest(options.writeSizes, 65536);
        this.sizes = options.sizes;
    }

    List<String[]> rows() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"ratio", "measured", "target", "verdict"});
        String fast = placements.get(0).label();
        String rtt = "RTT " + Sweep.label(pp);
        lower(rows, "shm / tcp " + rtt + ", both " + fast, rtt(Route.SHM, fast), rtt(Route.TCP, fast), 1 / 20.0);
        Measurement best = bestTcp(false);
        if (best != null) {
            lower(rows, "shm (" + fast + ") / tcp at its best placement (" + best.placement().label() + ") " + rtt,
                    rtt(Route.SHM, fast), best.rttMedianNs(pp), 1 / 20.0);
        }
        lower(rows, "shm / floor " + rtt + ", both " + fast, rtt(Route.SHM, fast), rtt(Route.FLOOR, fast), 2);
        String stream = "stream " + Sweep.label(st) + " writes";
        higher(rows, "shm / tcp " + stream + ", both " + fast, bps(Route.SHM, fast), bps(Route.TCP, fast), 4);
        Measurement bestStream = bestTcp(true);
        if (bestStream != null) {
            higher(rows, "shm (" + fast + ") / tcp at its best placement (" + bestStream.placement().label() + ") " + stream,
                    bps(Route.SHM, fast), bestStream.streamBps(st), 4);
            higher(rows, "shm (1 MiB rings) (" + fast + ") / tcp at its best placement " + stream,
                    bps(Route.SHM_1M, fast), bestStream.streamBps(st), Double.NaN);
        }
        for (Placement p : placements) {
            overhead(rows, "tcp+agent / tcp " + rtt + " (no-match overhead), " + p.label(),
                    rtt(Route.TCP_AGENT, p.label()), rtt(Route.TCP, p.label()), 3);
            overhead(rows, "tcp+agent / tcp RTT, median over all sizes, " + p.label(), medianOverhead(p.label()), 1, 3);
            overhead(rows, "tcp+agent / tcp " + stream + " (throughput change), " + p.label(),
                    bps(Route.TCP_AGENT, p.label()), bps(Route.TCP, p.label()), Double.NaN);
        }
        for (Placement p : placements) {
            higher(rows, "shm / tcp file copy, both " + p.label(), copy(Route.SHM, p.label()), copy(Route.TCP, p.label()), Double.NaN);
        }
        if (startup != null && startup.withMedian() > 0) {
            double added = startup.addedNanos() / 1e6;
            rows.add(new String[] {"JVM start-up added by the agent (median)", Report.fmt("%+.0f ms", added), "<= 300 ms",
                added <= 300 ? "met" : Report.fmt("missed by %.0f ms", added - 300)});
        }
        rows.removeIf(r -> r[1].startsWith("n/a")); // a row that was not run (--paths) has nothing to say
        return rows;
    }

    /** A ratio that should be at most {@code target} (round trips). */
    private static void lower(List<String[]> rows, String name, double num, double den, double target) {
        double r = num / den;
        String t = target < 1 ? Report.fmt("<= 1/%.0f", 1 / target) : Report.fmt("<= %.0fx", target);
        rows.add(new String[] {name, show(r), t, Double.isNaN(r) ? "-" : r <= target ? "met"
                : Report.fmt("missed by %.1fx", r / target)});
    }

    /** A ratio that should be at least {@code target} (throughput); NaN target = information only. */
    private static void higher(List<String[]> rows, String name, double num, double den, double target) {
        double r = num / den;
        boolean none = Double.isNaN(target);
        rows.add(new String[] {name, show(r), none ? "(no target)" : Report.fmt(">= %.0fx", target),
            Double.isNaN(r) || none ? "-" : r >= target ? "met" : Report.fmt("missed by %.1fx", target / r)});
    }

    /** Signed percentage change of {@code agent} over {@code base}; target NaN = information only. */
    private static void overhead(List<String[]> rows, String name, double agent, double base, double targetPct) {
        double pct = (agent / base - 1) * 100;
        boolean none = Double.isNaN(targetPct);
        rows.add(new String[] {name, Double.isNaN(pct) ? "n/a (not run)" : Report.fmt("%+.1f %%", pct),
            none ? "(no target)" : Report.fmt("<= %.0f %%", targetPct),
            Double.isNaN(pct) || none ? "-" : pct <= targetPct ? "met" : Report.fmt("missed by %.1f points", pct - targetPct)});
    }

    private static String show(double r) {
        return Double.isNaN(r) ? "n/a (not run)" : r < 1 ? Report.fmt("%.3f (1/%.1f)", r, 1 / r) : Report.fmt("%.2fx", r);
    }

    /** The median over sizes of tcp+agent RTT / tcp RTT, expressed as a ratio. */
    private double medianOverhead(String placement) {
        Measurement a = find(Route.TCP_AGENT, placement);
        Measurement t = find(Route.TCP, placement);
        if (a == null || t == null) {
            return Double.NaN;
        }
        double[] r = new double[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            r[i] = a.rttMedianNs(sizes[i]) / t.rttMedianNs(sizes[i]);
        }
        return Stats.median(r);
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
        return m == null ? Double.NaN : m.rttMedianNs(pp);
    }

    private double bps(Route route, String placement) {
        Measurement m = find(route, placement);
        return m == null ? Double.NaN : m.streamBps(st);
    }

    private double copy(Route route, String placement) {
        Measurement m = find(route, placement);
        return m == null ? Double.NaN : m.copy("bps");
    }

    /** TCP's best placement: lowest headline RTT, or highest headline streaming throughput. */
    Measurement bestTcp(boolean stream) {
        Measurement best = null;
        for (Measurement m : results) {
            if (m.route() != Route.TCP) {
                continue;
            }
            double v = stream ? m.streamBps(st) : m.rttMedianNs(pp);
            if (Double.isNaN(v)) {
                continue;
            }
            if (best == null || (stream ? v > best.streamBps(st) : v < best.rttMedianNs(pp))) {
                best = m;
            }
        }
        return best;
    }
}
