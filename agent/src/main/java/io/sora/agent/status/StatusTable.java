package io.sora.agent.status;

import java.util.ArrayList;
import java.util.List;

/**
 * Formats the status view as plain text: one row per connection, columns padded to the widest cell,
 * the reason last (it is the long one). Stateless.
 */
public final class StatusTable {
    private static final String[] HEADER = {"ID", "SIDE", "LOCAL", "REMOTE", "PATH", "SENT", "RECEIVED", "AGE", "STATE", "REASON"};

    private StatusTable() {
    }

    /** The table with its header line; "(no connections matched a rule)" when the list is empty. */
    public static String connections(List<ConnectionInfo> rows) {
        if (rows.isEmpty()) {
            return "(no connection has matched a rule yet)\n";
        }
        List<String[]> cells = new ArrayList<>();
        cells.add(HEADER);
        for (ConnectionInfo c : rows) {
            cells.add(new String[] {Long.toString(c.getId()), c.getSide(), c.getLocal(), c.getRemote(), c.getPath(),
                bytes(c.getBytesSent()), bytes(c.getBytesReceived()), age(c.getAgeMillis()), c.getState(), c.getReason()});
        }
        int[] width = new int[HEADER.length];
        for (String[] row : cells) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] row : cells) {
            for (int i = 0; i < row.length; i++) {
                boolean last = i == row.length - 1;
                boolean number = i == 0 || i == 5 || i == 6 || i == 7;
                String cell = row[i];
                if (last) {
                    sb.append(cell);
                } else if (number && row != HEADER) {
                    sb.append(" ".repeat(width[i] - cell.length())).append(cell).append("  ");
                } else {
                    sb.append(cell).append(" ".repeat(width[i] - cell.length())).append("  ");
                }
            }
            int end = sb.length();
            while (end > 0 && sb.charAt(end - 1) == ' ') {
                end--;
            }
            sb.setLength(end);
            sb.append('\n');
        }
        return sb.toString();
    }

    /** One line per fast path: {@code shm   available} or {@code rdma  unavailable: cause}. */
    /** How the agent reports a fast path it did not probe because no rule uses it (FastPaths). */
    public static final String NOT_PROBED = "not probed";

    public static String fastPaths(List<FastPathInfo> paths) {
        StringBuilder sb = new StringBuilder();
        for (FastPathInfo p : paths) {
            String state = p.isAvailable() ? "available"
                    : p.getCause() != null && p.getCause().startsWith(NOT_PROBED) ? p.getCause() // no rule uses it: never probed
                    : "unavailable: " + p.getCause();
            sb.append(String.format("%-5s %s%n", p.getName(), state));
        }
        return sb.toString();
    }

    /** An exact byte count (scripts compare them); "-" for -1 (TCP, not counted). */
    static String bytes(long n) {
        return n < 0 ? "-" : Long.toString(n);
    }

    /** {@code 850ms}, {@code 12.3s}, {@code 4m05s}, {@code 2h03m}. */
    public static String age(long millis) {
        if (millis < 1000) {
            return millis + "ms";
        }
        long s = millis / 1000;
        if (s < 60) {
            return String.format("%d.%ds", s, (millis % 1000) / 100);
        }
        if (s < 3600) {
            return String.format("%dm%02ds", s / 60, s % 60);
        }
        return String.format("%dh%02dm", s / 3600, (s % 3600) / 60);
    }
}
