package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SweepTest {
    @Test
    void sizesTakeKAndMSuffixes() {
        assertArrayEquals(new int[] {64, 4096, 1 << 20}, Sweep.parseSizes("--sizes", "64, 4k,1M"));
    }

    @Test
    void badSizesAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sweep.parseSizes("--sizes", "64,4q"));
        assertTrue(e.getMessage().contains("'4q'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Sweep.parseSize("--sizes", "8"));
        assertTrue(e.getMessage().contains("'8'") && e.getMessage().contains("16"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Sweep.parseSize("--sizes", "512m"));
    }

    @Test
    void iterationsFollowTheByteBudgetWithinBounds() {
        long budget = 64L << 20;
        assertEquals(2000, Sweep.iterations(64, 2000, budget));
        assertEquals(1024, Sweep.iterations(64 * 1024, 2000, budget));
        assertEquals(64, Sweep.iterations(1 << 20, 2000, budget));
        assertEquals(Sweep.MIN_ITERATIONS, Sweep.iterations(16 << 20, 2000, budget));
        assertEquals(10, Sweep.iterations(1 << 20, 10, budget), "never more than asked for");
    }

    @Test
    void warmupIsFullOnlyForTheFirstSize() {
        assertEquals(5000, Sweep.warmup(true, 5000, 64));
        assertEquals(1000, Sweep.warmup(false, 5000, 2000));
        assertEquals(50, Sweep.warmup(false, 5000, 32));
        assertEquals(0, Sweep.warmup(false, 0, 2000));
    }

    @Test
    void streamWritesAimAtTheTargetDuration() {
        long cap = 1L << 30;
        // 1 GB/s for 250 ms in 64 KiB writes
        assertEquals((long) (1e9 * 0.25 / 65536), Sweep.streamWrites(65536, 1e9, 250_000_000L, cap));
        assertEquals(Sweep.MIN_WRITES, Sweep.streamWrites(65536, 1, 250_000_000L, cap));
        assertEquals(cap / 65536, Sweep.streamWrites(65536, 1e15, 250_000_000L, cap));
        assertEquals(16_384, Sweep.streamWarmWrites(64, cap));
        assertEquals(16, Sweep.streamWarmWrites(1 << 20, cap));
        assertEquals(256, Sweep.streamWarmWrites(65536, cap));
        assertEquals(16, Sweep.streamWarmWrites(1 << 20, 64L << 20), "1/8 of a 64 MiB cap is 8 MiB, less than 16 writes");
    }

    @Test
    void labels() {
        assertEquals("64 B", Sweep.label(64));
        assertEquals("4 KiB", Sweep.label(4096));
        assertEquals("1 MiB", Sweep.label(1 << 20));
        assertEquals("1536 KiB", Sweep.label(1536 * 1024));
        assertEquals("1000 B", Sweep.label(1000));
    }
}
