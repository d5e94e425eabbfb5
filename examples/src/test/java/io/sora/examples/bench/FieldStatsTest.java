package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldStatsTest {
    private static final double NAN = Double.NaN;

    @Test
    void medianOfOddCountIsTheMiddleAndOfEvenCountTheMeanOfTheTwoMiddles() {
        assertEquals(3.0, FieldStats.median(new double[] {5, 1, 3}));
        assertEquals(2.5, FieldStats.median(new double[] {4, 1, 3, 2}));
        assertEquals(7.0, FieldStats.median(new double[] {7}));
    }

    @Test
    void medianLeavesOutMissingFiguresAndDoesNotReorderItsInput() {
        double[] v = {9, NAN, 1, 5};
        assertEquals(5.0, FieldStats.median(v));
        assertEquals(9.0, v[0]);
        assertTrue(Double.isNaN(v[1]));
        assertTrue(Double.isNaN(FieldStats.median(new double[] {NAN, NAN})));
        assertTrue(Double.isNaN(FieldStats.median(new double[0])));
    }

    @Test
    void latencyRatiosAreTcpOverShmPerAdjacentPair() {
        double[] tcp = {100, 90, 120};
        double[] shm = {10, 30, 40};
        assertArrayEquals(new double[] {10, 3, 3}, FieldStats.pairRatios(tcp, shm, false), 1e-12);
        FieldStats.Summary s = FieldStats.summarize(FieldStats.pairRatios(tcp, shm, false));
        assertEquals(3.0, s.median());
        assertEquals(3.0, s.min());
        assertEquals(10.0, s.max());
        assertEquals(3, s.count());
    }

    @Test
    void theMedianRatioIsNotTheRatioOfTheMedians() {
        double[] tcp = {100, 10, 50};
        double[] shm = {10, 100, 50};
        // medians 50 and 50 would give 1.0; pair by pair the ratios are 10, 0.1 and 1
        assertEquals(1.0, FieldStats.summarize(FieldStats.pairRatios(tcp, shm, false)).median());
        double[] tcp2 = {100, 100, 10};
        double[] shm2 = {10, 50, 20};
        assertEquals(2.0, FieldStats.summarize(FieldStats.pairRatios(tcp2, shm2, false)).median());
        assertEquals(100.0 / 20, FieldStats.median(tcp2) / FieldStats.median(shm2));
    }

    @Test
    void throughputRatiosAreShmOverTcpSoAboveOneStillMeansShmFaster() {
        assertArrayEquals(new double[] {2, 0.5}, FieldStats.pairRatios(new double[] {1000, 4000},
                new double[] {2000, 2000}, true), 1e-12);
    }

    @Test
    void aPairWithAMissingOrZeroFigureHasNoRatioAndIsNotCounted() {
        double[] r = FieldStats.pairRatios(new double[] {100, 100, 100}, new double[] {10, NAN, 0}, false);
        assertEquals(10.0, r[0]);
        assertTrue(Double.isNaN(r[1]));
        assertTrue(Double.isNaN(r[2]));
        FieldStats.Summary s = FieldStats.summarize(r);
        assertEquals(1, s.count());
        assertEquals(10.0, s.median());
        assertEquals(FieldStats.Summary.NONE, FieldStats.summarize(new double[] {NAN}));
    }

    @Test
    void ratiosNeedAlternatingPairs() {
        assertThrows(IllegalArgumentException.class, () -> FieldStats.pairRatios(new double[2], new double[3], false));
        assertThrows(IllegalArgumentException.class, () -> FieldStats.quotients(new double[2], new double[1]));
    }

    @Test
    void quotientsGiveShmOverFloor() {
        assertArrayEquals(new double[] {2, 4}, FieldStats.quotients(new double[] {10, 20}, new double[] {5, 5}), 1e-12);
    }

    private static FieldCase.Run run(String path, int pair, double median, boolean onPath) {
        return new FieldCase.Run(path, pair, median, median * 2, 1e9 / median, onPath, onPath ? path : "tcp", Map.of(), 1);
    }

    @Test
    void aShmPairThatFellBackCountsInNoShmFigureAndNoRatio() {
        FieldCase c = new FieldCase("sample-cold", "unpinned", "unpinned", false);
        c.tcp.add(run("tcp", 1, 300, true));
        c.shm.add(run("shm", 1, 100, true));
        c.tcp.add(run("tcp", 2, 300, true));
        c.shm.add(run("shm", 2, 300, false)); // as slow as tcp, because it was tcp
        c.tcp.add(run("tcp", 3, 200, true));
        c.shm.add(run("shm", 3, 50, true));
        assertEquals(2, c.shmOnPath());
        assertEquals(75.0, FieldCase.medianOfMedians(c.shm));
        assertEquals(300.0, FieldCase.medianOfMedians(c.tcp));
        FieldStats.Summary r = c.ratio();
        assertEquals(2, r.count());
        assertEquals(3.5, r.median());
        assertEquals(3.0, r.min());
        assertEquals(4.0, r.max());
    }

    @Test
    void throughputCasesCompareRoundTripsPerSecond() {
        FieldCase c = new FieldCase("conns", "4 conns, unpinned", "unpinned", true);
        c.tcp.add(run("tcp", 1, 200, true)); // 5,000,000 / s
        c.shm.add(run("shm", 1, 50, true)); // 20,000,000 / s
        assertEquals(4.0, c.ratio().median(), 1e-9);
    }

    @Test
    void shmOverFloorIsPerPair() {
        FieldCase c = new FieldCase("pp4k", "split", "split", false);
        c.tcp.add(run("tcp", 1, 100, true));
        c.shm.add(run("shm", 1, 20, true));
        c.floor.add(run("floor", 1, 5, true));
        c.tcp.add(run("tcp", 2, 100, true));
        c.shm.add(run("shm", 2, 30, true));
        c.floor.add(run("floor", 2, 15, true));
        FieldStats.Summary f = c.shmOverFloor();
        assertEquals(3.0, f.median());
        assertEquals(2.0, f.min());
        assertEquals(4.0, f.max());
        assertEquals(FieldStats.Summary.NONE, new FieldCase("pp4k", "same", "same", false).shmOverFloor());
    }
}
