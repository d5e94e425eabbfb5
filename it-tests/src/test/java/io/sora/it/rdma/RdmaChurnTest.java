package io.sora.it.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connect, exchange a byte each way, close, over RDMA, {@code -Dsora.rdma.churn.cycles} times (200 by
 * default: a pairing takes hundreds of milliseconds under the VM's emulation), both ends in this JVM:
 * file descriptors (all, those on /dev/infiniband, anonymous inodes), threads (all, sora-rdma-*),
 * the provider's queue mappings of /dev/infiniband/uverbs* and live memory registrations (reg_mr minus
 * dereg_mr in this JVM's trace) are counted after a warm-up and again at the end, once the last
 * connection's asynchronous release had a bounded time (30 s) to finish; none may grow, and every
 * registration of the churned connections must be deregistered. Runs in the Soft-RoCE VM only.
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class RdmaChurnTest {
    static final int CYCLES = Integer.getInteger("sora.rdma.churn.cycles", 200);
    static final int WARM_UP = 10;

    @Test
    void connectCloseCyclesLeaveNoDescriptorThreadMappingOrRegistration() throws Exception {
        SelfTrace trace = SelfTrace.ofThisJvm();
        try (ServerSocket ss = new ServerSocket(0, 50, RdmaSemanticsTest.rxeAddress())) {
            long warmMark = trace.mark();
            cycle(ss, WARM_UP);
            Map<String, Long> before = settle(trace, warmMark, null);
            Map<String, Long> open = countsWithOneConnectionOpen(ss, trace);
            long mark = trace.mark();
            long t0 = System.nanoTime();
            cycle(ss, CYCLES);
            long ms = (System.nanoTime() - t0) / 1_000_000L;
            Map<String, Long> after = settle(trace, mark, before);
            System.out.printf("RdmaChurnTest %s: %d connect/exchange/close cycles over rdma in %d ms (%d ms each);"
                    + " before %s; with one connection open %s; after %s%n", Runtime.version(), CYCLES, ms, ms / CYCLES,
                    before, open, after);
            List<SelfTrace.Event> events = trace.eventsFrom(mark);
            Set<Long> conns = SelfTrace.rdmaConnections(events);
            assertEquals(2 * CYCLES, conns.size(), "connection sides paired over rdma");
            assertEquals(0, SelfTrace.liveRegistrations(events, conns), "registrations of the churned connections left");
            assertEquals("", ProcessCounts.growth(before, after), "grew over " + CYCLES + " cycles");
        }
    }

    /**
     * A server socket closed and bound again to the same port at once (a service restarting its
     * listener, a test suite reusing a port) serves that port over RDMA again: until 2026-11-24 the
     * closed one's RDMA listen id was destroyed on its CM thread between two 500 ms waits for an event,
     * the new RDMA listen found the port taken, and its connections stayed on TCP (a flaky CI run of the
     * channel semantics suite).
     */
    @Test
    void aServerSocketBoundAgainAtOnceToItsPortServesRdma() throws Exception {
        int port;
        try (ServerSocket first = new ServerSocket(0, 50, RdmaSemanticsTest.rxeAddress())) {
            port = first.getLocalPort();
            cycle(first, 1);
        }
        for (int round = 0; round < 5; round++) {
            try (ServerSocket again = new ServerSocket(port, 50, RdmaSemanticsTest.rxeAddress())) {
                try {
                    cycle(again, 1);
                } catch (AssertionError e) {
                    throw new AssertionError("round " + round + " on port " + port + ": " + e.getMessage(), e);
                }
            }
        }
    }

    /**
     * The counts while one connection (both sides here) is open: the counters must see what a connection
     * holds (two completion threads, six registrations, more descriptors), or the comparison after the
     * churn would prove nothing.
     */
    private static Map<String, Long> countsWithOneConnectionOpen(ServerSocket ss, SelfTrace trace) throws Exception {
        Map<String, Long> base = ProcessCounts.now();
        long mark = trace.mark();
        try (Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort()); Socket s = ss.accept()) {
            c.getOutputStream().write(1);
            assertEquals(1, s.getInputStream().read(), "byte over the probe connection");
            Map<String, Long> open = ProcessCounts.now();
            List<SelfTrace.Event> events = trace.eventsFrom(mark);
            Set<Long> conns = SelfTrace.rdmaConnections(events);
            assertEquals(2, conns.size(), "sides of the probe connection on rdma");
            assertEquals(6, SelfTrace.liveRegistrations(events, conns), "live registrations of one open connection");
            assertEquals(2, ProcessCounts.completionThreads().stream().filter(n -> conns.contains(ProcessCounts.connOf(n))).count(),
                    "completion threads of one open connection");
            assertTrue(open.get("fds") > base.get("fds"), "descriptors of one open connection: " + base + " -> " + open);
            return open;
        }
    }

    private static void cycle(ServerSocket ss, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            try (Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort()); Socket s = ss.accept()) {
                assertEquals("rdma", RdmaTransferTest.pathOf(c), "client path in cycle " + i);
                assertEquals("rdma", RdmaTransferTest.pathOf(s), "server path in cycle " + i);
                c.getOutputStream().write(i);
                assertEquals(i & 0xff, s.getInputStream().read(), "byte in cycle " + i);
                s.getOutputStream().write(i + 1);
                assertEquals((i + 1) & 0xff, c.getInputStream().read(), "reply in cycle " + i);
            }
        }
    }

    /**
     * Waits (at most 30 s) until the connections traced since {@code mark} deregistered everything and
     * their completion threads ended and,
     * when {@code target} is given, no count exceeds it; returns the counts then, with the JVM-wide live
     * registrations as {@code live_mrs}.
     */
    private static Map<String, Long> settle(SelfTrace trace, long mark, Map<String, Long> target) throws Exception {
        Map<String, Long> now = null;
        for (int i = 0; i < 300; i++) {
            List<SelfTrace.Event> since = trace.eventsFrom(mark);
            Set<Long> conns = SelfTrace.rdmaConnections(since);
            long pending = SelfTrace.liveRegistrations(since, conns)
                    + ProcessCounts.completionThreads().stream().filter(n -> conns.contains(ProcessCounts.connOf(n))).count();
            now = ProcessCounts.now();
            now.put("live_mrs", SelfTrace.liveRegistrations(trace.eventsFrom(0)));
            if (pending == 0 && (target == null || ProcessCounts.growth(target, now).isEmpty())) {
                if (i > 0 || target != null) return now;
            }
            Thread.sleep(100);
        }
        assertTrue(target != null, "the warm-up's connections were not released within 30 s: " + now);
        return now;
    }
}
