package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StatsTest {
    private static long[] shuffled(int n) {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = (i * 7919L) % n + 1; // 1..n in a scrambled order (7919 is prime, coprime to n below)
        }
        return a;
    }

    @Test
    void percentilesAreNearestRank() {
        long[] a = shuffled(1000);
        assertEquals(500, Stats.percentile(a, 50));
        assertEquals(990, Stats.percentile(a, 99));
        assertEquals(999, Stats.percentile(a, 99.9));
        assertEquals(1000, Stats.percentile(a, 100));
        assertEquals(1, Stats.percentile(a, 0));
    }

    @Test
    void percentileOfARangeSortsOnlyThatRange() {
        long[] a = {9, 9, 5, 3, 4, 9};
        assertEquals(4, Stats.percentile(a, 2, 5, 50));
        assertEquals(9, a[0]);
        assertEquals(9, a[5]);
        assertEquals(3, a[2]);
    }

    @Test
    void medianOfEvenCountIsTheLowerMiddle() {
        assertEquals(2.0, Stats.median(new double[] {4, 1, 3, 2}));
        assertEquals(7.5, Stats.median(new double[] {7.5}));
    }

    @Test
    void badInputsNameTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new long[3], 101));
        assertTrue(e.getMessage().contains("101"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new long[3], 2, 2, 50));
        assertTrue(e.getMessage().contains("[2, 2)"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Stats.median(new double[0]));
    }
}
