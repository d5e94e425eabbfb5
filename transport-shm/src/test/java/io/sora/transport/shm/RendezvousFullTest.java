package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sora listener that does not accept on its rendezvous socket (its process stopped, out of
 * descriptors, or hung) fills that socket's queue: the clients that connect to it next must not wait
 * for it (a blocking Unix-domain connect to a full queue waits until the listener accepts, before the
 * application's TCP connect and beyond its timeout). They stay on TCP at once, naming why.
 */
class RendezvousFullTest {
    @TempDir
    Path tmp;

    @Test
    void aRendezvousThatAcceptsNobodyNeverHoldsAClient() throws Exception {
        ShmTransport transport = new ShmTransport(new ShmSettings(tmp, 200), Tracer.OFF);
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofMillis(100));
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket tcp = new ServerSocket(0, 50, loopback);
             ServerSocketChannel stuck = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            int port = tcp.getLocalPort();
            Path sock = new ShmDirectory(tmp).socketPath(port);
            java.nio.file.Files.createDirectories(sock.getParent());
            stuck.bind(UnixDomainSocketAddress.of(sock), 1); // never accepts
            InetSocketAddress server = new InetSocketAddress(loopback, port);
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                // past the queue's length: each client either waits its pairing wait for a reply that
                // cannot come (its rendezvous in the queue) or, the queue full, stays on TCP at once
                String last = null;
                for (int i = 0; i < 6; i++) {
                    try (Socket c = new Socket(loopback, port); Socket s = tcp.accept()) {
                        PairingResult r = transport.connect(ShmFixture.clientKey(c), options, new TestHooks());
                        last = assertInstanceOf(PairingResult.Fallback.class, r).reason();
                    }
                }
                assertTrue(last.contains("not accepting"), last);
            });
        }
    }

    /**
     * The liveness checks (a second listener binding the same port's rendezvous, the clean-up of stale
     * rendezvous files) take a full queue for a live listener, at once.
     */
    @Test
    void aFullRendezvousIsLiveToTheChecks() throws Exception {
        Path sock = new ShmDirectory(tmp).socketPath(1);
        java.nio.file.Files.createDirectories(sock.getParent());
        java.util.List<java.nio.channels.SocketChannel> queued = new java.util.ArrayList<>();
        try (ServerSocketChannel stuck = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            stuck.bind(UnixDomainSocketAddress.of(sock), 1); // never accepts
            for (int i = 0; i < 8; i++) { // until the queue refuses
                java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open(StandardProtocolFamily.UNIX);
                queued.add(c);
                c.configureBlocking(false);
                try {
                    if (!c.connect(UnixDomainSocketAddress.of(sock))) break;
                } catch (java.io.IOException full) {
                    break;
                }
            }
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                java.io.IOException e = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
                        () -> new RendezvousListener(sock, 1, null, false));
                assertTrue(String.valueOf(e.getMessage()).contains("live"), String.valueOf(e));
                org.junit.jupiter.api.Assertions.assertEquals(0, new ShmDirectory(tmp).removeStaleRendezvous());
                assertTrue(java.nio.file.Files.exists(sock), "a live listener's file is kept");
            });
        } finally {
            for (java.nio.channels.SocketChannel c : queued) c.close();
        }
    }

    /**
     * A burst of clients (a connection pool filling: here 200 threads' connects at one moment) waits in the
     * queue of a live listener whose thread has not accepted them yet, none refused: with the JDK's default
     * queue of 50, 23 of 128 such connections and half of 256 stayed on TCP ("not accepting").
     */
    @Test
    void aBurstOfClientsFitsInTheRendezvousQueue() throws Exception {
        Path sock = new ShmDirectory(tmp).socketPath(2);
        java.nio.file.Files.createDirectories(sock.getParent());
        java.util.List<java.nio.channels.SocketChannel> queued = new java.util.ArrayList<>();
        // no thread: nothing accepts until a catch-up, as a listener busy with the burst's first clients
        RendezvousListener listener = new RendezvousListener(sock, 2, null, false);
        // the kernel caps every queue at net.core.somaxconn (4096 here; 128 before Linux 5.4)
        int burst = Math.min(200, Integer.parseInt(java.nio.file.Files.readString(Path.of("/proc/sys/net/core/somaxconn")).trim()));
        try {
            for (int i = 0; i < burst; i++) {
                java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open(StandardProtocolFamily.UNIX);
                queued.add(c);
                ShmClient.connectRendezvous(c, sock); // throws "not accepting" once the queue is full
            }
            org.junit.jupiter.api.Assertions.assertEquals(burst, queued.size());
        } finally {
            for (java.nio.channels.SocketChannel c : queued) c.close();
            listener.close();
        }
    }
}
