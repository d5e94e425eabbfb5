package io.sora.examples.bench;

import java.util.Map;

/**
 * One pair's parsed {@code RESULT} line; absent figures read as NaN, and so do costs a JVM could
 * not measure (reported as -1). Keys: {@code pp.SIZE.*} (ping-pong), {@code st.SIZE.*} (streaming),
 * {@code copy.*} (file copy). Immutable.
 */
record Measurement(Route route, Placement placement, Map<String, String> values) {

    /** The row's name in tables and legends, e.g. {@code tcp (split)}. */
    String name() {
        return route.label + " (" + placement.label() + ")";
    }

    double get(String key) {
        String v = values.get(key);
        if (v == null) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name() + ": " + key + "=" + v + " is not a number", e);
        }
    }

    double pp(int size, String key) {
        return get("pp." + size + "." + key);
    }

    double st(int size, String key) {
        return get("st." + size + "." + key);
    }

    double copy(String key) {
        return get("copy." + key);
    }

    /** CPU nanoseconds per KiB moved by one side ({@code prefix} = {@code pp.4096.}, {@code st.65536.}, {@code copy.}). */
    double cpuNsPerKiB(String prefix, boolean server) {
        double cpu = get(prefix + (server ? "cpu_server_ns" : "cpu_client_ns"));
        return cpu < 0 ? Double.NaN : cpu / get(prefix + "bytes") * 1024;
    }

    /** Bytes one side's data-path thread allocated per message (round trip, write or copy chunk). */
    double allocPerMessage(String prefix, boolean server) {
        double alloc = get(prefix + (server ? "alloc_server" : "alloc_client"));
        return alloc < 0 ? Double.NaN : alloc / get(prefix + "msgs");
    }

    double rttMedianNs(int size) {
        return pp(size, "rtt_median_ns");
    }

    double streamBps(int size) {
        return st(size, "bps");
    }
}
