package io.sora.it.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server with an {@code rdma accept} rule whose pairing wait is 5 s (the suite's rules) serves
 * clients without sora and clients with it, interleaved: every byte is exact, every sora client is on
 * rdma at both ends, and every plain one was decided TCP because no RDMA connection was announced before
 * its TCP connect, not because a wait ran out (docs/rdma.md, "Pairing"). Until 2026-11-29 every plain
 * client held the accept for the whole wait: 5 s here, 100 ms under JSOR's default, a denial of service
 * any client without sora caused by connecting. A plain client is a {@code java.net.Socket} subclass,
 * which sora never pairs (nor announces). The accept time as such is a benchmark's figure.
 */
class RdmaAcceptNeverWaitsTest {
    private static final int EACH = Integer.getInteger("sora.rdma.acceptNeverWaits.clients", 20);

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void plainAndSoraClientsInterleavedNoPlainClientWaits() throws Exception {
        SelfTrace trace = SelfTrace.ofThisJvm();
        long mark = trace.mark();
        ExecutorService serving = Executors.newSingleThreadExecutor();
        try (ServerSocket ss = new ServerSocket(0, 50, RdmaSemanticsTest.rxeAddress())) {
            InetSocketAddress at = (InetSocketAddress) ss.getLocalSocketAddress();
            Future<List<String>> served = serving.submit(() -> serve(ss, 2 * EACH));
            List<String> clientPaths = new ArrayList<>();
            for (int i = 0; i < 2 * EACH; i++) {
                boolean plain = i % 2 == 0;
                try (Socket c = plain ? new Socket() { } : new Socket()) {
                    c.setSoTimeout(60_000);
                    c.connect(at, 60_000);
                    byte[] msg = ("client " + i + (plain ? " plain" : " sora")).getBytes(StandardCharsets.US_ASCII);
                    c.getOutputStream().write(msg.length);
                    c.getOutputStream().write(msg);
                    byte[] echo = new byte[msg.length];
                    new DataInputStream(c.getInputStream()).readFully(echo);
                    assertArrayEquals(msg, echo, "echo of client " + i);
                    clientPaths.add(RdmaTransferTest.pathOf(c));
                }
            }
            List<String> serverPaths = served.get(120, TimeUnit.SECONDS);
            for (int i = 0; i < 2 * EACH; i++) {
                String want = i % 2 == 0 ? "tcp" : "rdma";
                assertEquals(want, clientPaths.get(i), "client path of connection " + i);
                assertEquals(want, serverPaths.get(i), "server path of connection " + i);
            }
        } finally {
            serving.shutdownNow();
        }
        List<String> notAnnounced = new ArrayList<>();
        List<String> otherTcp = new ArrayList<>();
        for (SelfTrace.Event e : trace.eventsFrom(mark)) {
            if (!e.is("NET", 462) || !"tcp".equals(e.path())) continue;
            if (e.line().contains("client announced no pairing")) notAnnounced.add(e.line());
            else otherTcp.add(e.line());
        }
        assertEquals(EACH, notAnnounced.size(), () -> "server decisions 'client announced no pairing'; other tcp paths: " + otherTcp);
        assertTrue(otherTcp.stream().noneMatch(l -> l.contains("no pairing request within")),
                () -> "a plain client waited out the pairing wait: " + otherTcp);
    }

    /** Accepts {@code n} connections one after another, echoes one length-prefixed message on each; their paths. */
    private static List<String> serve(ServerSocket ss, int n) throws IOException {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try (Socket s = ss.accept()) {
                s.setSoTimeout(60_000);
                paths.add(RdmaTransferTest.pathOf(s));
                DataInputStream in = new DataInputStream(s.getInputStream());
                byte[] msg = new byte[in.readUnsignedByte()];
                in.readFully(msg);
                s.getOutputStream().write(msg);
                s.getOutputStream().flush();
            }
        }
        return paths;
    }
}
