package io.sora.trace;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * Formats the whole-second part of timestamps, {@code HH:mm:ss} in a zone or (with the date)
 * {@code yyyy-MM-ddTHH:mm:ss}, and remembers the last one, so a burst of events within one second
 * formats it once. Thread-safe: the writing threads of one tracer share it (the pair of second and text
 * is replaced as a whole; two threads crossing a second at once may both format it, harmlessly).
 *
 * <p>By hand, not with a {@code DateTimeFormatter} pattern: parsing a pattern loads and links the
 * formatting machinery of {@code java.time.format}, about 50 classes, in every JVM that turns the trace on.
 */
final class SecondCache {
    private final ZoneId zone;
    private final boolean withDate;
    private volatile Formatted last = new Formatted(Long.MIN_VALUE, null);

    private record Formatted(long second, String text) {}

    /** {@code yyyy-MM-ddTHH:mm:ss} in UTC. */
    static SecondCache utcDateTime() {
        return new SecondCache(ZoneOffset.UTC, true);
    }

    /** {@code HH:mm:ss} in {@code zone}. */
    static SecondCache localTime(ZoneId zone) {
        return new SecondCache(zone, false);
    }

    private SecondCache(ZoneId zone, boolean withDate) {
        this.zone = zone;
        this.withDate = withDate;
    }

    String format(long epochSecond) {
        Formatted f = last;
        if (f.second() != epochSecond) {
            f = new Formatted(epochSecond, text(epochSecond));
            last = f;
        }
        return f.text();
    }

    private String text(long epochSecond) {
        int offset = zone instanceof ZoneOffset z ? z.getTotalSeconds()
                : zone.getRules().getOffset(Instant.ofEpochSecond(epochSecond)).getTotalSeconds();
        long local = epochSecond + offset;
        int secondOfDay = (int) Math.floorMod(local, 86_400L);
        StringBuilder sb = new StringBuilder(19);
        if (withDate) {
            LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(local, 86_400L));
            int year = date.getYear();
            if (year >= 0 && year < 10_000) {
                for (int d = 1000; d > 1 && year < d; d /= 10) sb.append('0');
            }
            sb.append(year);
            two(sb.append('-'), date.getMonthValue());
            two(sb.append('-'), date.getDayOfMonth());
            sb.append('T');
        }
        two(sb, secondOfDay / 3600);
        two(sb.append(':'), secondOfDay / 60 % 60);
        two(sb.append(':'), secondOfDay % 60);
        return sb.toString();
    }

    private static void two(StringBuilder sb, int value) {
        if (value < 10) sb.append('0');
        sb.append(value);
    }
}
