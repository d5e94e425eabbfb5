package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RttRecorderTest {
    private static Map<String, String> parse(StringBuilder b) {
        Map<String, String> m = new HashMap<>();
        for (String w : b.toString().trim().split("\\s+")) {
            m.put(w.substring(0, w.indexOf('=')), w.substring(w.indexOf('=') + 1));
        }
        return m;
    }

    @Test
    void reportsMedianOfRepMediansPooledTailAndCosts() {
        RttRecorder r = new RttRecorder(3, 1000);
        r.start(4096, 100);
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < 100; i++) {
                // rep 0: 1001..1100 ns, rep 1: 2001..2100, rep 2: 3001..3100
                r.samples()[r.index(rep, i)] = (rep + 1) * 1000L + (99 - i) + 1;
            }
            r.addCosts(10, 0, 20, 5);
            r.endRep(rep);
        }
        StringBuilder b = new StringBuilder();
        r.appendTo(b);
        Map<String, String> m = parse(b);
        assertEquals("2050", m.get("pp.4096.rtt_median_ns"));
        assertEquals("1050", m.get("pp.4096.rtt_rep_min_ns"));
        assertEquals("3050", m.get("pp.4096.rtt_rep_max_ns"));
        assertEquals("2099", m.get("pp.4096.rtt_p99_ns"));
        assertEquals("3100", m.get("pp.4096.rtt_p999_ns"));
        assertEquals("3100", m.get("pp.4096.rtt_max_ns"));
        assertEquals("300", m.get("pp.4096.msgs"));
        assertEquals(Long.toString(2L * 4096 * 300), m.get("pp.4096.bytes"));
        assertEquals("30", m.get("pp.4096.cpu_client_ns"));
        assertEquals("60", m.get("pp.4096.cpu_server_ns"));
        assertEquals("15", m.get("pp.4096.alloc_server"));
        // rep 1 moves 4096 B per 2050.5 ns on average: the median of the three reps' rates
        assertEquals(Long.toString(Math.round(4096 * 100 * 1e9 / 205050)), m.get("pp.4096.bps"));
    }

    @Test
    void anUnknownCostStaysUnknown() {
        RttRecorder r = new RttRecorder(2, 10);
        r.start(64, 10);
        r.addCosts(5, 5, -1, 3);
        r.addCosts(5, 5, 7, 3);
        for (int rep = 0; rep < 2; rep++) {
            for (int i = 0; i < 10; i++) {
                r.samples()[r.index(rep, i)] = 100;
            }
            r.endRep(rep);
        }
        StringBuilder b = new StringBuilder();
        r.appendTo(b);
        assertEquals("-1", parse(b).get("pp.64.cpu_server_ns"));
        assertEquals("6", parse(b).get("pp.64.alloc_server"));
    }

    @Test
    void refusesMoreIterationsThanSized() {
        RttRecorder r = new RttRecorder(2, 10);
        assertThrows(IllegalArgumentException.class, () -> r.start(64, 11));
    }
}
