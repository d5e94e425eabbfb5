package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PeerRowTest {
    @Test
    void parsesRoundTripAndOptionalThroughput() {
        PeerRow lat = PeerRow.parse("ib_send_lat -s 4096=52.4");
        assertEquals("ib_send_lat -s 4096", lat.name());
        assertEquals(52.4, lat.rttUs());
        assertTrue(Double.isNaN(lat.mbps()));
        PeerRow bw = PeerRow.parse("ib_write_bw -s 65536=-,27.5");
        assertTrue(Double.isNaN(bw.rttUs()));
        assertEquals(27.5, bw.mbps());
        PeerRow both = PeerRow.parse("rstream=110,31");
        assertEquals(110.0, both.rttUs());
        assertEquals(31.0, both.mbps());
    }

    @Test
    void errorsNameTheOffendingInput() {
        assertMessage("'noequals'", "noequals");
        assertMessage("'x=abc':", "x=abc");
        assertMessage("'abc' is not a number", "x=abc");
        assertMessage("'-3' must be a positive number", "x=-3");
        assertMessage("no figure", "x=-,-");
        assertMessage("more than two figures", "x=1,2,3");
        assertMessage("'=5'", "=5");
    }

    @Test
    void optionIsRepeatableAndKeepsOrder() {
        BenchOptions o = BenchOptions.parse(new String[] {"--external-row", "b=2", "--external-row=a=-,1"});
        assertEquals(List.of(new PeerRow("b", 2, Double.NaN), new PeerRow("a", Double.NaN, 1)), o.peers);
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[] {"--external-row", "a=b"}));
    }

    @Test
    void tableListsDriverRowsThenPeersAtTheHeadlineSizes() {
        Measurement tcp = new Measurement(Route.TCP, new Placement("split", 1, 0),
                Map.of("pp.4096.rtt_median_ns", "123400", "st.65536.bps", "25000000"));
        Measurement floor = new Measurement(Route.FLOOR, new Placement("same", 0, 0), Map.of("pp.4096.rtt_median_ns", "2500"));
        Tables.Table t = PeerRow.table(List.of(tcp, floor),
                List.of(PeerRow.parse("ib_send_lat=48.6"), PeerRow.parse("ib_write_bw=-,27.25")), 4096, 65536, "us");
        assertEquals(5, t.rows().size());
        assertArrayEquals(new String[] {"path", "round trip 4 KiB, median (us)", "stream 64 KiB writes (MB/s)"}, t.rows().get(0));
        assertArrayEquals(new String[] {"tcp (split)", "123.4", "25.0"}, t.rows().get(1));
        assertArrayEquals(new String[] {"floor (same)", "2.50", "-"}, t.rows().get(2));
        assertArrayEquals(new String[] {"ib_send_lat (peer)", "48.6", "-"}, t.rows().get(3));
        assertArrayEquals(new String[] {"ib_write_bw (peer)", "-", "27.3"}, t.rows().get(4));
    }

    private static void assertMessage(String part, String spec) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerRow.parse(spec));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
