package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RatiosTest {
    private static final Placement SPLIT = new Placement("split", 1, 0);
    private static final Placement SAME = new Placement("same", 0, 0);

    private static Measurement m(Route r, Placement p, double rtt4k, double bps64k) {
        return new Measurement(r, p, Map.of("pp.4096.rtt_median_ns", Double.toString(rtt4k),
                "st.65536.bps", Double.toString(bps64k)));
    }

    private static String[] row(List<String[]> rows, String start) {
        for (String[] r : rows) {
            if (r[0].startsWith(start)) {
                return r;
            }
        }
        return null;
    }

    @Test
    void verdictsSayWhetherAndByHowMuchATargetIsMissed() {
        BenchOptions o = BenchOptions.parse(new String[] {"--sizes", "4k", "--write-sizes", "64k", "--startup-runs", "0"});
        List<Measurement> results = new ArrayList<>(List.of(
                m(Route.TCP, SPLIT, 60_000, 1e9), m(Route.TCP_AGENT, SPLIT, 61_200, 0.9e9),
                m(Route.SHM, SPLIT, 6_000, 2e9), m(Route.FLOOR, SPLIT, 2_000, Double.NaN),
                m(Route.TCP, SAME, 8_000, 2e9), m(Route.TCP_AGENT, SAME, 8_400, 2e9)));
        List<String[]> rows = new Ratios(o, List.of(SPLIT, SAME), results, null).rows();

        String[] shmTcp = row(rows, "shm / tcp RTT 4 KiB, both split");
        assertNotNull(shmTcp);
        assertEquals("0.100 (1/10.0)", shmTcp[1]);
        assertEquals("missed by 2.0x", shmTcp[3]);

        String[] best = row(rows, "shm (split) / tcp at its best placement (same) RTT");
        assertNotNull(best, "TCP's best placement is the one-CPU one here");
        assertEquals("missed by 15.0x", best[3]);

        String[] floor = row(rows, "shm / floor RTT 4 KiB, both split");
        assertEquals("3.00x", floor[1]);
        assertEquals("missed by 1.5x", floor[3]);

        String[] stream = row(rows, "shm / tcp stream 64 KiB writes, both split");
        assertEquals("2.00x", stream[1]);
        assertEquals("missed by 2.0x", stream[3]);

        assertEquals("met", row(rows, "tcp+agent / tcp RTT 4 KiB (no-match overhead), split")[3]);
        String[] same = row(rows, "tcp+agent / tcp RTT 4 KiB (no-match overhead), same");
        assertEquals("+5.0 %", same[1]);
        assertEquals("missed by 2.0 points", same[3]);
    }
}
