package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

/** The hand-made second formats against the JDK's formatter, across days, years, zones and DST. */
class SecondCacheTest {
    private static final long[] SECONDS = {
        0L, 59L, 86_399L, 86_400L, -1L, -86_401L,
        951_782_400L, // 2000-02-29
        1_795_500_000L, // 2026
        1_774_746_000L, 1_774_749_600L, // around a European DST change (2026-03-29)
        253_402_300_799L, // 9999-12-31T23:59:59
        -62_135_596_800L, // 0001-01-01
        -61_000_000_000L,
    };

    @Test
    void utcDateTimeMatchesTheIsoPattern() {
        DateTimeFormatter iso = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);
        SecondCache cache = SecondCache.utcDateTime();
        for (long s : SECONDS) {
            assertEquals(iso.format(Instant.ofEpochSecond(s)), cache.format(s), "second " + s);
            assertEquals(iso.format(Instant.ofEpochSecond(s)), cache.format(s), "second " + s + ", cached");
        }
    }

    @Test
    void localTimeMatchesTheJdkInEachZone() {
        for (String id : new String[] {"UTC", "Europe/Paris", "America/St_Johns", "Asia/Kolkata", "+05:45", "-10:00"}) {
            ZoneId zone = ZoneId.of(id);
            DateTimeFormatter hms = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(zone);
            SecondCache cache = SecondCache.localTime(zone);
            for (long s : SECONDS) {
                assertEquals(hms.format(Instant.ofEpochSecond(s)), cache.format(s), id + ", second " + s);
            }
        }
    }
}
