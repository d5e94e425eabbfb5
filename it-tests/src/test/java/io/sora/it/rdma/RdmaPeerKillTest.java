package io.sora.it.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * kill -9 of the peer JVM (agent, rdma rules, the rxe address) in the middle of a transfer over RDMA:
 * this JVM's reader must return EOF or an IOException and its writer an IOException, and no thread may
 * stay stuck. Two cases: the peer is the server and both directions are streaming when it dies; the
 * peer is the client and it stopped reading and writing first, so both of this side's threads are
 * parked (blocked read, blocked write waiting for credits) when it dies. The time from SIGKILL to the
 * later of the two returns is printed (expected well under 2 s); the assertion is a hang guard (20 s,
 * as the VM emulates the CPU). Afterwards the connection's completion thread ends and every memory
 * region it registered is deregistered. Runs in the Soft-RoCE VM only.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RdmaPeerKillTest {
    static final long HANG_GUARD_MILLIS = 20_000;

    @Test
    void peerServerKilledWhileStreamingEndsBothOfTheClientsThreads() throws Exception {
        SelfTrace trace = SelfTrace.ofThisJvm();
        long mark = trace.mark();
        String ip = RdmaSemanticsTest.rxeAddress().getHostAddress();
        try (ForkedJvm peer = startPeer("server", ip, "stream")) {
            int port = Integer.parseInt(awaitPrefix(peer, "READY ").substring(6));
            try (Socket s = new Socket(RdmaSemanticsTest.rxeAddress(), port)) {
                killAndCheck("server", "streaming", peer, s, false);
            }
        }
        assertReleased(trace, mark);
    }

    @Test
    void peerClientKilledWhileThisSideIsBlockedInReadAndWriteEndsBoth() throws Exception {
        SelfTrace trace = SelfTrace.ofThisJvm();
        long mark = trace.mark();
        try (ServerSocket ss = new ServerSocket(0, 5, RdmaSemanticsTest.rxeAddress());
             ForkedJvm peer = startPeer("client", ss.getInetAddress().getHostAddress(), "" + ss.getLocalPort(), "stall")) {
            ss.setSoTimeout(180_000);
            try (Socket s = ss.accept()) {
                killAndCheck("client", "blocked", peer, s, true);
            }
        }
        assertReleased(trace, mark);
    }

    private void killAndCheck(String victim, String state, ForkedJvm peer, Socket s, boolean stall) throws Exception {
        assertEquals("rdma", RdmaTransferTest.pathOf(s), "this side's path");
        AtomicLong in = new AtomicLong();
        AtomicLong out = new AtomicLong();
        long[] ended = new long[2];
        String[] outcome = new String[2];
        Thread reader = survivor("survivor-reader", 0, ended, outcome, () -> read(s.getInputStream(), in));
        Thread writer = survivor("survivor-writer", 1, ended, outcome, () -> write(s.getOutputStream(), out));
        assertEquals("PATH rdma", awaitPrefix(peer, "PATH "), "the peer's path");
        awaitPrefix(peer, stall ? "STALLED" : "STREAMING");
        if (stall) {
            assertTrue(awaitParked(reader) && awaitParked(writer), "this side's threads did not block: reader "
                    + reader.getState() + ", writer " + writer.getState());
        }
        String states = "reader " + reader.getState() + ", writer " + writer.getState();
        long moved = in.get() + out.get();
        long killedAt = System.nanoTime();
        peer.process().destroyForcibly(); // SIGKILL on Linux
        reader.join(HANG_GUARD_MILLIS);
        writer.join(Math.max(1, HANG_GUARD_MILLIS - (System.nanoTime() - killedAt) / 1_000_000L));
        assertTrue(peer.process().waitFor(10, TimeUnit.SECONDS), "the peer did not die");
        assertTrue(!reader.isAlive() && !writer.isAlive(), "still stuck " + HANG_GUARD_MILLIS + " ms after SIGKILL: reader "
                + reader.getState() + ", writer " + writer.getState() + "; moved " + moved + " bytes before");
        long ms = (Math.max(ended[0], ended[1]) - killedAt) / 1_000_000L;
        System.out.printf("RdmaPeerKillTest %s: peer %s killed while %s (%s, %d bytes moved): reader and writer returned"
                + " %d ms after SIGKILL (reader %d ms: %s; writer %d ms: %s)%n", Runtime.version(), victim, state, states,
                moved, ms, (ended[0] - killedAt) / 1_000_000L, outcome[0], (ended[1] - killedAt) / 1_000_000L, outcome[1]);
        assertTrue(ms < HANG_GUARD_MILLIS, "took " + ms + " ms");
        assertTrue(outcome[0].equals("EOF") || outcome[0].contains("Exception"), "reader: " + outcome[0]);
        assertTrue(outcome[1].contains("Exception"), "writer: " + outcome[1]);
    }

    /** After close: no completion thread of this test's connections and no registration left (bounded wait). */
    private static void assertReleased(SelfTrace trace, long mark) throws Exception {
        long live = -1;
        List<String> cq = List.of();
        for (int i = 0; i < 200; i++) {
            List<SelfTrace.Event> ev = trace.eventsFrom(mark);
            Set<Long> conns = SelfTrace.rdmaConnections(ev);
            assertEquals(1, conns.size(), "rdma connections of this test in the trace: " + conns);
            live = SelfTrace.liveRegistrations(ev, conns);
            cq = ProcessCounts.completionThreads().stream().filter(n -> conns.contains(ProcessCounts.connOf(n))).toList();
            if (live == 0 && cq.isEmpty()) return;
            Thread.sleep(50);
        }
        throw new AssertionError("10 s after close: " + live + " registrations not deregistered, completion threads " + cq);
    }

    private interface Io {
        void run() throws IOException;
    }

    private static Thread survivor(String name, int slot, long[] ended, String[] outcome, Io body) {
        Thread t = new Thread(() -> {
            String o;
            try {
                body.run();
                o = "EOF";
            } catch (IOException e) {
                o = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            ended[slot] = System.nanoTime();
            outcome[slot] = o;
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void read(InputStream is, AtomicLong in) throws IOException {
        byte[] b = new byte[65536];
        int n;
        while ((n = is.read(b)) >= 0) in.addAndGet(n);
    }

    private static void write(OutputStream os, AtomicLong out) throws IOException {
        byte[] b = new byte[65536];
        for (;;) {
            os.write(b);
            out.addAndGet(b.length);
        }
    }

    /** Both samples 100 ms apart parked: the thread sleeps on the fast path, it is not spinning. */
    private static boolean awaitParked(Thread t) throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            if (parked(t)) {
                Thread.sleep(100);
                if (parked(t)) return true;
            }
            if (!t.isAlive()) return false;
            Thread.sleep(50);
        }
        return false;
    }

    private static boolean parked(Thread t) {
        Thread.State st = t.getState();
        return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }

    private static ForkedJvm startPeer(String... args) throws IOException, URISyntaxException {
        String agent = SelfTrace.agentArgument().replaceAll("trace\\.file=[^,]*",
                "trace.file=" + SelfTrace.ofThisJvm().file().resolveSibling("peer-" + args[0] + "-%p.json"));
        List<String> jvm = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-XX:TieredStopAtLevel")) jvm.add(a);
        }
        jvm.add(agent);
        Path classes = Path.of(RdmaPeer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path jdk = Path.of(System.getProperty("java.home"));
        return ForkedJvm.start(jdk, jvm, classes.toString(), RdmaPeer.class.getName(), args);
    }

    private static String awaitPrefix(ForkedJvm j, String prefix) throws InterruptedException {
        for (int i = 0; i < 36_000; i++) { // 180 s: an agent JVM starts slowly under emulation
            for (String l : j.stdout()) {
                if (l.startsWith(prefix)) return l;
            }
            if (!j.process().isAlive()) break;
            Thread.sleep(5);
        }
        throw new AssertionError("no '" + prefix + "' line from " + j.describe());
    }
}
