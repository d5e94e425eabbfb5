package io.sora.agent.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatusTableTest {
    @Test
    void columnsAlignAndTheReasonComesLast() {
        String table = StatusTable.connections(List.of(
                new ConnectionInfo(1, "server", "127.0.0.1:65444", "127.0.0.1:40001", "shm", "paired (s.conf:1)", 123456, 789, 61_000, "open"),
                new ConnectionInfo(12, "server", "127.0.0.1:65444", "127.0.0.1:40002", "tcp", "no pairing request within 100 ms", -1, -1, 850, "closed")));
        assertEquals(""
                + "ID  SIDE    LOCAL            REMOTE           PATH  SENT    RECEIVED  AGE    STATE   REASON\n"
                + " 1  server  127.0.0.1:65444  127.0.0.1:40001  shm   123456       789  1m01s  open    paired (s.conf:1)\n"
                + "12  server  127.0.0.1:65444  127.0.0.1:40002  tcp        -         -  850ms  closed  no pairing request within 100 ms\n",
                table);
    }

    @Test
    void emptyAndFastPaths() {
        assertEquals("(no connection has matched a rule yet)\n", StatusTable.connections(List.of()));
        assertEquals("rdma  unavailable: no RDMA device\nshm   available\n", StatusTable.fastPaths(List.of(
                new FastPathInfo("rdma", false, "no RDMA device"), new FastPathInfo("shm", true, null)))
                .replace(System.lineSeparator(), "\n"));
    }

    @Test
    void ages() {
        assertEquals("0ms", StatusTable.age(0));
        assertEquals("12.3s", StatusTable.age(12_345));
        assertEquals("4m05s", StatusTable.age(245_000));
        assertEquals("2h03m", StatusTable.age(7_380_000));
    }

    @Test
    void aPathNoRuleUsesIsShownAsNotProbedNotAsUnavailable() {
        assertEquals("rdma  not probed (no rule in the configuration uses it)\nshm   available\n", StatusTable.fastPaths(List.of(
                new FastPathInfo("rdma", false, "not probed (no rule in the configuration uses it)"), new FastPathInfo("shm", true, null))));
    }
}
