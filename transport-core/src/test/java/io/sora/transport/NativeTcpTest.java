package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The calls the RDMA pairing's proof of the TCP connection makes, on real loopback connections. */
class NativeTcpTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /**
     * A client socket's descriptor (reached through its SOCKS wrapper) takes a proof; the server sees it
     * at the front without taking it, takes exactly it, and the application's bytes after it are
     * read by the JDK's own stream, whole and in order.
     */
    @Test
    void aProofWrittenIsSeenWithoutBeingTakenThenTakenAlone() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 5, LOOPBACK); Socket c = new Socket(LOOPBACK, ss.getLocalPort());
             Socket s = ss.accept()) {
            TcpConnection client = NativeTcp.of(c);
            TcpConnection server = NativeTcp.of(s);
            assertNotNull(client, "no descriptor for a client socket: " + NativeSockets.availability());
            assertNotNull(server, "no descriptor for an accepted socket");
            byte[] proof = "SORP0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
            client.write(proof);
            c.getOutputStream().write("after".getBytes(StandardCharsets.US_ASCII));
            byte[] seen = new byte[proof.length];
            assertEquals(proof.length, server.peek(seen, seen.length, 5_000));
            assertArrayEquals(proof, seen);
            byte[] again = new byte[proof.length];
            assertEquals(proof.length, server.peek(again, again.length, 0), "a peek takes nothing");
            server.discard(proof.length);
            assertArrayEquals("after".getBytes(StandardCharsets.US_ASCII), s.getInputStream().readNBytes(5));
        }
    }

    /**
     * A peek waits for as many bytes as asked for (one byte there is not enough), gives what there is when
     * its wait ends, and reports the peer's end: -1 with nothing, the bytes and {@code ended()} with some.
     */
    @Test
    void aPeekWaitsForTheWholeCountAndSeesTheEnd() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 5, LOOPBACK); Socket c = new Socket(LOOPBACK, ss.getLocalPort());
             Socket s = ss.accept()) {
            TcpConnection server = NativeTcp.of(s);
            byte[] into = new byte[4];
            assertEquals(0, server.peek(into, into.length, 20), "nothing received yet");
            c.getOutputStream().write('x');
            long t0 = System.nanoTime();
            int n = 0;
            for (int i = 0; i < 100 && n == 0; i++) n = server.peek(into, into.length, 50); // the byte may still be on its way
            assertEquals(1, n);
            assertTrue(System.nanoTime() - t0 >= 40_000_000L, "returned before its wait ended with 1 of 4 bytes");
            assertEquals(false, server.ended());
            t0 = System.nanoTime();
            assertEquals(1, server.peek(into, 1, 5_000), "at least one byte asked for: the one there");
            assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "waited for more than the one byte asked for");
            c.shutdownOutput();
            boolean ended = false;
            for (int i = 0; i < 100 && !ended; i++) {
                assertEquals(1, server.peek(into, into.length, 50));
                ended = server.ended();
            }
            assertTrue(ended, "the peer's end was not seen");
            assertEquals('x', s.getInputStream().read(), "the peeked byte is still the application's");
            assertEquals(-1, server.peek(into, into.length, 50));
            assertTrue(server.ended());
        }
    }

    /** A descriptor whose ports are not the connection's is not written to, looked at, drained or shut down; a closed socket has none. */
    @Test
    void aWriteChecksTheDescriptorIsStillTheConnection() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 5, LOOPBACK); Socket c = new Socket(LOOPBACK, ss.getLocalPort());
             Socket s = ss.accept()) {
            int fd = NativeSockets.socketFd(c);
            assertTrue(fd >= 0);
            IOException e = assertThrows(IOException.class,
                    () -> NativeSockets.send(fd, new byte[] {1}, c.getLocalPort(), c.getPort() + 1));
            assertTrue(e.getMessage().contains("no longer the TCP connection"), e.getMessage());
            assertEquals(0, s.getInputStream().available());
            // nor is a descriptor of other ports looked at, drained or shut down
            c.getOutputStream().write(5);
            int sfd = NativeSockets.socketFd(s);
            assertThrows(java.net.SocketException.class,
                    () -> NativeSockets.peek(sfd, new byte[1], 1, 1000, new boolean[1], s.getLocalPort() + 1, s.getPort()));
            assertThrows(java.net.SocketException.class, () -> NativeSockets.discard(sfd, 1, s.getLocalPort(), s.getPort() + 1));
            NativeSockets.shutdown(sfd, s.getLocalPort(), s.getPort() + 1);
            assertEquals(5, s.getInputStream().read(), "the byte is still there and the connection open");
            s.getOutputStream().write(6);
            assertEquals(6, c.getInputStream().read());
            TcpConnection client = NativeTcp.of(c);
            c.close();
            assertEquals(-1, NativeSockets.socketFd(c));
            assertThrows(java.net.SocketException.class, () -> client.write(new byte[] {1}));
        }
    }

    /**
     * The inode of a connection's socket, by its four-tuple: 0 while it waits in the accept queue, then the
     * accepted socket's own (what tells it from a later connection reusing the four-tuple).
     */
    @Test
    void aConnectionsInodeIsZeroUntilAcceptedThenTheAcceptedSockets() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 5, LOOPBACK); Socket c = new Socket(LOOPBACK, ss.getLocalPort())) {
            InetSocketAddress server = new InetSocketAddress(LOOPBACK, ss.getLocalPort());
            InetSocketAddress client = (InetSocketAddress) c.getLocalSocketAddress();
            long[] queued = {-1};
            for (int i = 0; i < 1000 && queued[0] != 0; i++) NativeSockets.tcpState(server, client, queued); // the handshake's end may lag
            assertEquals(0, queued[0], "in the accept queue: no socket file yet");
            try (Socket s = ss.accept()) {
                long accepted = NativeTcp.of(s).inode();
                assertTrue(accepted > 0, "the accepted socket's inode: " + accepted);
                long[] found = {-1};
                assertEquals(NativeSockets.TCP_ESTABLISHED, NativeSockets.tcpState(server, client, found));
                assertEquals(accepted, found[0]);
                long[] none = {-7};
                NativeSockets.tcpState(server, new InetSocketAddress(LOOPBACK, client.getPort() == 1 ? 2 : 1), none);
                assertEquals(-7, none[0], "no connection: left as it was");
                assertTrue(NativeTcp.of(c).inode() != accepted, "the client's socket is another");
            }
        }
    }

    /** A channel's descriptor serves as a socket's; a shutdown makes the application read its end. */
    @Test
    void channelsAndShutdown() throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel c = SocketChannel.open(ss.getLocalAddress()); SocketChannel s = ss.accept()) {
            TcpConnection client = NativeTcp.of(c.socket());
            TcpConnection server = NativeTcp.of(s.socket());
            assertNotNull(client, NativeSockets.availability());
            client.write(new byte[] {7, 8, 9});
            byte[] seen = new byte[3];
            int n = 0;
            for (int i = 0; i < 100 && n < 3; i++) n = server.peek(seen, seen.length, 50);
            assertArrayEquals(new byte[] {7, 8, 9}, Arrays.copyOf(seen, n));
            server.shutdown();
            ByteBuffer b = ByteBuffer.allocate(8);
            assertEquals(3, s.read(b), "bytes received before the shutdown are still read");
            assertEquals(-1, s.read(b.clear()));
            assertEquals(-1, c.read(ByteBuffer.allocate(1)), "the peer sees the end too");
        }
    }
}
