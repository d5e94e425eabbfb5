package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * A row measured outside the driver and handed in with {@code --external-row NAME=RTT_US[,MBPS]}: a
 * peer tool on the same device and in the same run (in the Soft-RoCE VM: {@code ib_send_lat},
 * {@code ib_write_bw}, {@code rstream}, {@code rstream -T s}), printed next to the driver's own
 * rows so that ratios are taken within one run. Either figure may be {@code -} (not measured, NaN).
 * Immutable.
 *
 * @param name  the row's name as printed, e.g. {@code ib_send_lat -s 4096}
 * @param rttUs round trip in microseconds, NaN when not measured
 * @param mbps  throughput in MB/s (10^6 B), NaN when not measured
 */
record PeerRow(String name, double rttUs, double mbps) {

    /** Parses {@code NAME=RTT_US[,MBPS]}; errors name the offending text. */
    static PeerRow parse(String spec) {
        int eq = spec.lastIndexOf('=');
        if (eq <= 0 || eq == spec.length() - 1) {
            throw new IllegalArgumentException("--external-row '" + spec + "' is not NAME=RTT_US[,MBPS]");
        }
        String[] figures = spec.substring(eq + 1).split(",", -1);
        if (figures.length > 2) {
            throw new IllegalArgumentException("--external-row '" + spec + "' has more than two figures");
        }
        double rtt = figure(spec, figures[0]);
        double mbps = figures.length > 1 ? figure(spec, figures[1]) : Double.NaN;
        if (Double.isNaN(rtt) && Double.isNaN(mbps)) {
            throw new IllegalArgumentException("--external-row '" + spec + "' has no figure");
        }
        return new PeerRow(spec.substring(0, eq).trim(), rtt, mbps);
    }

    private static double figure(String spec, String text) {
        String t = text.trim();
        if (t.equals("-") || t.isEmpty()) {
            return Double.NaN;
        }
        try {
            double v = Double.parseDouble(t);
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new IllegalArgumentException("--external-row '" + spec + "': '" + t + "' must be a positive number");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--external-row '" + spec + "': '" + t + "' is not a number", e);
        }
    }

    /**
     * The table comparing the driver's rows at one message size and one write size with the peers:
     * column heads, then one row per driver measurement, then one per peer.
     */
    static Tables.Table table(List<Measurement> results, List<PeerRow> peers, int size, int writeSize, String us) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"path", "round trip " + Sweep.label(size) + ", median (" + us + ")",
            "stream " + Sweep.label(writeSize) + " writes (MB/s)"});
        for (Measurement m : results) {
            rows.add(new String[] {m.name(), m.route().pingPong ? Report.micros(m.rttMedianNs(size)) : "-",
                m.route().streams ? Report.mbps(m.streamBps(writeSize)) : "-"});
        }
        for (PeerRow p : peers) {
            rows.add(new String[] {p.name() + " (peer)", Report.micros(p.rttUs() * 1000), Report.mbps(p.mbps() * 1e6)});
        }
        return new Tables.Table("Peers on the same device, same run (" + Sweep.label(size) + " round trips, "
                + Sweep.label(writeSize) + " writes; peer figures measured outside the driver)", rows);
    }
}
