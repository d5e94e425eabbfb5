package io.sora.trace;

import java.time.Instant;
import java.time.format.DateTimeFormatter;

/**
 * Remembers the formatted whole-second part of the last timestamp, so a burst of events within one second
 * formats the date once. Thread-safe: the writing threads of one tracer share it (the pair of second and
 * text is replaced as a whole; two threads crossing a second at once may both format it, harmlessly).
 */
final class SecondCache {
    private final DateTimeFormatter formatter;
    private volatile Formatted last = new Formatted(Long.MIN_VALUE, null);

    private record Formatted(long second, String text) {}

    SecondCache(DateTimeFormatter formatter) {
        this.formatter = formatter;
    }

    String format(long epochSecond) {
        Formatted f = last;
        if (f.second() != epochSecond) {
            f = new Formatted(epochSecond, formatter.format(Instant.ofEpochSecond(epochSecond)));
            last = f;
        }
        return f.text();
    }
}
