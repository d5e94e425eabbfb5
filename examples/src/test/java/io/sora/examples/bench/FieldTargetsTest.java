package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldTargetsTest {
    private static FieldCase.Run run(String path, int pair, double medianNs, double p99Ns) {
        return new FieldCase.Run(path, pair, medianNs, p99Ns, 1e9 / medianNs, true, path, Map.of(), 1);
    }

    /** A latency case whose every pair had these medians (tcp, shm), p99 twice the median. */
    private static FieldCase latency(String row, String setting, double tcpNs, double shmNs) {
        FieldCase c = new FieldCase(row, setting, "unpinned", false);
        for (int i = 1; i <= 3; i++) {
            c.tcp.add(run("tcp", i, tcpNs, 2 * tcpNs));
            c.shm.add(run("shm", i, shmNs, 2 * shmNs));
        }
        return c;
    }

    private static String verdictOf(List<String[]> table, String issue, String startOfTarget) {
        for (String[] r : table) {
            if (r[0].equals("#" + issue) && r[1].startsWith(startOfTarget)) return r[3];
        }
        return null;
    }

    @Test
    void aRatioAtItsBoundIsMetAndBelowItIsMissedByTheFactor() {
        List<String[]> t = FieldTargets.table(List.of(latency("pp4k", "unpinned", 6000, 2000), latency("pp4k", "same", 6000, 5000)));
        assertEquals("met", verdictOf(t, "10", "4 KiB ping-pong, unpinned"));
        // 1.20x against a bound of 1.25x
        assertEquals("missed by 1.04x", verdictOf(t, "10", "4 KiB ping-pong, both on one CPU"));
    }

    @Test
    void theSetUpTargetIsTwiceTcpsTimeAndTheAcceptTargetThreeMilliseconds() {
        List<String[]> t = FieldTargets.table(List.of(latency("setup", "both attached, unpinned", 100_000, 400_000),
                latency("setup", "accept, client without sora, unpinned", 100_000, 200_000)));
        assertEquals("missed by 2.00x", verdictOf(t, "13", "shm connection set-up"));
        assertEquals("met", verdictOf(t, "13", "accept()"));
    }

    @Test
    void boundsOnShmAloneReadItsMedianAndItsP99() {
        FieldCase think = latency("think", "T=20 µs, split", 70_000, 7_000); // adds 7 us: above 6
        List<String[]> t = FieldTargets.table(List.of(think, latency("pp4k", "split", 70_000, 2_000)));
        assertEquals("missed by 1.17x", verdictOf(t, "10", "think time"));
        assertEquals("met", verdictOf(t, "10", "p99, 4 KiB, split")); // p99 = 2x the median
    }

    @Test
    void targetsOfRowsThatDidNotRunAreLeftOut() {
        assertNull(FieldTargets.table(List.of(latency("hog", "unpinned", 6000, 2000))));
        List<String[]> t = FieldTargets.table(List.of(latency("pp4k", "unpinned", 6000, 2000)));
        assertEquals(2, t.size(), "the header and the one target of the row that ran");
    }
}
