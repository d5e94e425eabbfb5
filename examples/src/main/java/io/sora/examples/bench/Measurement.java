package io.sora.examples.bench;

import java.util.Map;

/** One pair's parsed {@code RESULT} line; absent figures read as NaN. Immutable. */
record Measurement(Route route, Placement placement, Map<String, String> values) {

    double get(String key) {
        String v = values.get(key);
        if (v == null) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(route.label + "/" + placement.label() + ": " + key + "=" + v + " is not a number", e);
        }
    }

    double rttMedianNs() {
        return get("rtt_median_ns");
    }

    double streamBytesPerSecond() {
        return get("stream_bps");
    }
}
