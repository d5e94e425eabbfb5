package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MeterTest {
    private static volatile Object sink;

    @Test
    void seesAnAllocationAndNothingBetweenTwoReadings() {
        Meter.prime();
        long a0 = Meter.allocatedBytes();
        long a1 = Meter.allocatedBytes();
        sink = new byte[1 << 20];
        long a2 = Meter.allocatedBytes();
        assertEquals(0, Meter.delta(a0, a1), "reading the allocation counter must not allocate");
        assertTrue(Meter.delta(a1, a2) >= 1 << 20, "a 1 MiB array must show: " + Meter.delta(a1, a2));
    }

    @Test
    void processCpuTimeIsKnownAndGrowsWithWork() {
        long[] c0 = Meter.cpu();
        long x = 0;
        for (int i = 0; i < 50_000_000; i++) {
            x += i ^ (x >>> 3);
        }
        sink = x;
        long used = Meter.cpuSince(c0);
        assertTrue(c0 != null && c0.length >= 2, "no thread CPU times read from /proc/self/task");
        assertTrue(used > 0, "50 million loop iterations used no CPU time? " + used);
    }

    @Test
    void aThreadThatEndsBetweenReadingsCannotMakeTheTimeNegative() {
        long[] before = {1, 1_000_000, 99, 5_000_000_000L}; // thread 99 has gone since
        assertTrue(Meter.cpuSince(before) >= 0);
        assertEquals(-1, Meter.cpuSince(null));
    }

    @Test
    void deltaOfAnUnknownReadingIsUnknown() {
        assertEquals(-1, Meter.delta(-1, 5));
        assertEquals(-1, Meter.delta(5, -1));
        assertEquals(3, Meter.delta(2, 5));
    }
}
