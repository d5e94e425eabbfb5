package io.sora.it.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What RDMA memory a peer can reach, proven from the trace an operator sees ({@code JSOR.70 reg_mr}
 * with size, keys and access flags, {@code JSOR.71 dereg_mr}): several connections paired at once in
 * this JVM (both ends here, so every connection side is traced here) must each have registered exactly
 * one remotely accessible region, its receive ring, with remote write and without remote read or
 * atomics, and no two of them may share an rkey. Over the whole trace of the JVM (start-up self-test
 * and every earlier test included), no region is ever readable remotely and no rkey is registered
 * while another live remotely accessible region holds it. Runs in the Soft-RoCE VM only.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RdmaMemoryExposureTest {
    static final int CONNECTIONS = 4;

    @Test
    void eachConnectionExposesOnlyItsReceiveRingForRemoteWriteUnderItsOwnRkey() throws Exception {
        SelfTrace trace = SelfTrace.ofThisJvm();
        long mark = trace.mark();
        List<Socket> open = new ArrayList<>();
        try (ServerSocket ss = new ServerSocket(0, 50, RdmaSemanticsTest.rxeAddress())) {
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket c = new Socket(RdmaSemanticsTest.rxeAddress(), ss.getLocalPort());
                open.add(c);
                Socket s = ss.accept();
                open.add(s);
                assertEquals("rdma", RdmaTransferTest.pathOf(c), "client path of connection " + i);
                assertEquals("rdma", RdmaTransferTest.pathOf(s), "server path of connection " + i);
                c.getOutputStream().write(i);
                assertEquals(i, s.getInputStream().read(), "byte over connection " + i);
            }
            // every side is paired and all are open at once: their registrations are all live now
            List<SelfTrace.Event> events = trace.eventsFrom(mark);
            Set<Long> conns = SelfTrace.rdmaConnections(events);
            assertEquals(2 * CONNECTIONS, conns.size(), "rdma connection sides in the trace: " + conns);
            Map<Long, SelfTrace.Registration> exposed = new HashMap<>();
            for (SelfTrace.Registration r : SelfTrace.registrations(events)) {
                if (!conns.contains(r.conn())) continue;
                System.out.printf("RdmaMemoryExposureTest conn %d: %s, %d bytes, rkey %d, access %d%n",
                        r.conn(), r.what(), r.bytes(), r.rkey(), r.access());
                if (!r.remotelyAccessible()) continue;
                SelfTrace.Registration prev = exposed.put(r.conn(), r);
                assertTrue(prev == null, "connection " + r.conn() + " exposes two regions: " + prev + " and " + r);
                assertEquals("receive ring", r.what(), "the remotely accessible region of connection " + r.conn());
                assertEquals(SelfTrace.LOCAL_WRITE | SelfTrace.REMOTE_WRITE, r.access(),
                        "access flags of " + r + " (local write + remote write only; no remote read, no atomics)");
            }
            assertEquals(conns, exposed.keySet(), "connection sides that exposed exactly one region");
            Map<Long, Long> byRkey = new HashMap<>();
            for (SelfTrace.Registration r : exposed.values()) {
                Long other = byRkey.put(r.rkey(), r.conn());
                assertTrue(other == null, "rkey " + r.rkey() + " of connection " + r.conn() + " is also connection " + other + "'s");
            }
            System.out.println("RdmaMemoryExposureTest " + Runtime.version() + ": " + conns.size()
                    + " connection sides, one remote-write-only receive ring each, " + byRkey.size() + " distinct rkeys;"
                    + " process counts with them open: " + ProcessCounts.now());
        } finally {
            for (Socket s : open) s.close();
        }
        assertNoRemoteReadAndNoSharedLiveRkeyInTheWholeTrace(trace);
    }

    private static void assertNoRemoteReadAndNoSharedLiveRkeyInTheWholeTrace(SelfTrace trace) throws Exception {
        List<SelfTrace.Event> all = trace.eventsFrom(0);
        Map<Long, Long> liveRemote = new HashMap<>(); // rkey -> conn
        int registrations = 0;
        for (SelfTrace.Event e : all) {
            if (e.is("JSOR", 70)) {
                SelfTrace.Registration r = SelfTrace.registrations(List.of(e)).get(0);
                registrations++;
                assertEquals(0, r.access() & (SelfTrace.REMOTE_READ | SelfTrace.REMOTE_ATOMIC), "remote read or atomic access: " + e.line());
                if (r.remotelyAccessible()) {
                    Long holder = liveRemote.put(r.rkey(), r.conn());
                    assertTrue(holder == null, "rkey " + r.rkey() + " registered for connection " + r.conn()
                            + " while connection " + holder + " still had it: " + e.line());
                }
            } else if (e.is("JSOR", 71)) {
                Long rkey = e.detailNumber("rkey");
                if (rkey != null && Long.valueOf(e.conn()).equals(liveRemote.get(rkey))) liveRemote.remove(rkey);
            }
        }
        assertTrue(registrations >= 3 * 2 * CONNECTIONS, "only " + registrations + " reg_mr events in " + trace.file());
        System.out.println("RdmaMemoryExposureTest: whole trace, " + registrations
                + " registrations: none remotely readable, no rkey shared by two live remotely writable regions");
    }
}
