package io.sora.rules;

import java.time.Duration;

/**
 * Collects the {@code key=value} fields of one rule into {@link RuleOptions}. One instance per rule line; not
 * thread-safe.
 */
final class OptionsParser {

    private static final String KEYS = "sndbuf, rcvbuf, wait";

    private int sendBufferSize = RuleOptions.DEFAULT_SEND_BUFFER_SIZE;
    private int receiveBufferSize = RuleOptions.DEFAULT_RECEIVE_BUFFER_SIZE;
    private Duration fallbackWait = RuleOptions.DEFAULT_FALLBACK_WAIT;
    private int sndbufColumn;
    private int rcvbufColumn;
    private int waitColumn;
    private boolean any;

    /** Adds one field that contains '='. */
    void add(String field, int column) throws FieldError {
        int eq = field.indexOf('=');
        String key = field.substring(0, eq);
        String value = field.substring(eq + 1);
        int valueColumn = column + eq + 1;
        if (key.isEmpty()) {
            throw new FieldError(column, field, "option '" + field + "' has no name");
        }
        switch (key) {
            case "sndbuf" -> {
                sndbufColumn = firstTime(key, column, sndbufColumn, value);
                sendBufferSize = size(key, value, valueColumn);
            }
            case "rcvbuf" -> {
                rcvbufColumn = firstTime(key, column, rcvbufColumn, value);
                receiveBufferSize = size(key, value, valueColumn);
            }
            case "wait" -> {
                waitColumn = firstTime(key, column, waitColumn, value);
                fallbackWait = duration(key, value, valueColumn);
            }
            default -> throw new FieldError(column, key, "unknown option '" + key + "', expected one of: " + KEYS);
        }
        any = true;
    }

    RuleOptions build() {
        return any ? new RuleOptions(sendBufferSize, receiveBufferSize, fallbackWait) : RuleOptions.defaults();
    }

    private static int firstTime(String key, int column, int earlierColumn, String value) throws FieldError {
        if (earlierColumn != 0) {
            throw new FieldError(column, key,
                    "duplicate option '" + key + "' (already given in column " + earlierColumn + ")");
        }
        if (value.isEmpty()) {
            throw new FieldError(column, key + "=", "option '" + key + "=' has no value");
        }
        return column;
    }

    /** A size in bytes: digits, optionally followed by k/K (KiB) or m/M (MiB). */
    private static int size(String key, String value, int column) throws FieldError {
        int end = value.length();
        long unit = 1;
        char last = value.charAt(end - 1);
        if (last == 'k' || last == 'K') {
            unit = 1024;
            end--;
        } else if (last == 'm' || last == 'M') {
            unit = 1024 * 1024;
            end--;
        }
        long n = digits(value, end);
        if (n < 0) {
            throw new FieldError(column, value, key + " '" + value
                    + "' is not a size: write bytes, or a number with suffix k (KiB) or m (MiB)");
        }
        long bytes = n * unit; // n is at most 10^12 + 1, so no overflow
        if (bytes < RuleOptions.MIN_BUFFER_SIZE || bytes > RuleOptions.MAX_BUFFER_SIZE) {
            throw new FieldError(column, value, key + " '" + value + "' is out of range "
                    + RuleOptions.MIN_BUFFER_SIZE + ".." + RuleOptions.MAX_BUFFER_SIZE + " bytes (4k..1024m)");
        }
        return (int) bytes;
    }

    /** A duration: digits (milliseconds), or digits followed by ms or s. */
    private static Duration duration(String key, String value, int column) throws FieldError {
        int end = value.length();
        long unitMillis = 1;
        if (value.endsWith("ms")) {
            end -= 2;
        } else if (value.endsWith("s")) {
            unitMillis = 1000;
            end -= 1;
        }
        long n = digits(value, end);
        if (n < 0) {
            throw new FieldError(column, value, key + " '" + value
                    + "' is not a duration: write milliseconds, or a number with suffix ms or s");
        }
        long millis = n * unitMillis;
        if (millis > RuleOptions.MAX_FALLBACK_WAIT.toMillis()) {
            throw new FieldError(column, value, key + " '" + value + "' is out of range 0..60s");
        }
        return Duration.ofMillis(millis);
    }

    /**
     * The value of {@code s[0, end)} if it is ASCII digits, else -1. Values above 10^12 come back as 10^12 + 1:
     * out of every range here, and small enough that multiplying by a unit cannot overflow.
     */
    private static long digits(String s, int end) {
        if (end <= 0) {
            return -1;
        }
        final long cap = 1_000_000_000_000L;
        long n = 0;
        for (int i = 0; i < end; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = Math.min(cap + 1, n * 10 + (c - '0'));
        }
        return n;
    }
}
