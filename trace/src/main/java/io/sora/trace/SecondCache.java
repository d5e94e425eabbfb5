package io.sora.trace;

import java.time.Instant;
import java.time.format.DateTimeFormatter;

/**
 * Remembers the formatted whole-second part of the last timestamp, so a burst of events within one second
 * formats the date once. Not thread-safe: each writing thread owns one.
 */
final class SecondCache {
    private final DateTimeFormatter formatter;
    private long second = Long.MIN_VALUE;
    private String text;

    SecondCache(DateTimeFormatter formatter) {
        this.formatter = formatter;
    }

    String format(long epochSecond) {
        if (epochSecond != second) {
            text = formatter.format(Instant.ofEpochSecond(epochSecond));
            second = epochSecond;
        }
        return text;
    }
}
