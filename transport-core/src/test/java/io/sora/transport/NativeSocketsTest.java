package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeSocketsTest {
    @TempDir
    Path dir;

    /**
     * The kernel's state of one TCP connection by its four-tuple: established on both ends, none for a
     * tuple no connection has (the port's listening socket, or none), close-wait once the peer closed; and an IPv4 connection of a dual-stack server
     * socket is found by its IPv4 ends.
     */
    @Test
    void theKernelsStateOfOneTcpConnection() throws Exception {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        java.net.InetAddress loopback = java.net.InetAddress.getByName("127.0.0.1");
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 5, loopback);
             java.net.Socket c = new java.net.Socket(loopback, ss.getLocalPort());
             java.net.Socket s = ss.accept()) {
            java.net.InetSocketAddress server = (java.net.InetSocketAddress) s.getLocalSocketAddress();
            java.net.InetSocketAddress client = (java.net.InetSocketAddress) s.getRemoteSocketAddress();
            assertEquals(NativeSockets.TCP_ESTABLISHED, NativeSockets.tcpState(server, client));
            assertEquals(NativeSockets.TCP_ESTABLISHED, NativeSockets.tcpState(client, server));
            // no such connection: the lookup finds the listening socket of that port, or nothing at all
            assertEquals(NativeSockets.TCP_LISTEN, NativeSockets.tcpState(server, new java.net.InetSocketAddress(loopback, client.getPort() == 1 ? 2 : 1)));
            assertEquals(0, NativeSockets.tcpState(new java.net.InetSocketAddress(loopback, client.getPort()),
                    new java.net.InetSocketAddress(loopback, client.getPort() == 1 ? 2 : 1)));
            c.close();
            int state = -2;
            for (int i = 0; i < 1000 && state != NativeSockets.TCP_CLOSE_WAIT; i++) {
                state = NativeSockets.tcpState(server, client);
                if (state != NativeSockets.TCP_CLOSE_WAIT) Thread.sleep(1);
            }
            assertEquals(NativeSockets.TCP_CLOSE_WAIT, state);
        }
        try (java.net.ServerSocket dual = new java.net.ServerSocket()) {
            dual.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName("::"), 0));
            try (java.net.Socket c = new java.net.Socket(loopback, dual.getLocalPort()); java.net.Socket s = dual.accept()) {
                assertEquals(NativeSockets.TCP_ESTABLISHED, NativeSockets.tcpState((java.net.InetSocketAddress) s.getLocalSocketAddress(),
                        (java.net.InetSocketAddress) s.getRemoteSocketAddress()), s.getLocalSocketAddress() + " " + s.getRemoteSocketAddress());
            }
        } catch (java.net.SocketException noIpv6) {
            // a host without IPv6: nothing to check here
        }
    }

    @Test
    void readinessPeerAndClosedChannels() throws IOException {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        Path sock = dir.resolve("t.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(sock));
            try (SocketChannel accepted = server.accept()) {
                int fd = NativeSockets.fd(accepted);
                assertTrue(fd >= 0, "no descriptor: is sun.nio.ch exported to the tests?");
                assertEquals(NativeSockets.effectiveUid(), NativeSockets.peerUid(fd));
                // nothing sent: the wait runs out
                long t0 = System.nanoTime();
                assertFalse(NativeSockets.awaitReadable(fd, 20));
                assertTrue(System.nanoTime() - t0 >= 15_000_000L, "returned before its timeout");
                client.write(ByteBuffer.wrap(new byte[] {7}));
                assertTrue(NativeSockets.awaitReadable(fd, 5_000));
                ByteBuffer one = ByteBuffer.allocate(1);
                assertEquals(1, accepted.read(one));
                // the peer's close makes it readable (a read then gives -1)
                client.close();
                assertTrue(NativeSockets.awaitReadable(fd, 5_000));
                assertEquals(-1, accepted.read(one.clear()));
                // a descriptor that is no socket: -errno (ENOTSOCK), not a uid
                Pipe pipe = Pipe.open();
                try (Pipe.SourceChannel source = pipe.source(); Pipe.SinkChannel sink = pipe.sink()) {
                    int pipeFd = NativeSockets.fd(source);
                    assertTrue(pipeFd >= 0);
                    assertEquals(-88, NativeSockets.peerUid(pipeFd), "ENOTSOCK expected");
                }
            }
            assertEquals(-1, NativeSockets.fd(client), "a closed channel has no descriptor to use");
        }
    }

    /** The RDMA self-test's TCP connection, made without the JDK's socket classes: real, on both addresses, closed by close(). */
    @Test
    void aTcpConnectionToItselfExistsUntilClosed() throws IOException {
        for (String a : new String[] {"127.0.0.1", "::1"}) {
            java.net.InetAddress address = java.net.InetAddress.getByName(a);
            ConnectionKey key;
            try (NativeSockets.TcpPair tcp = NativeSockets.tcpPair(address)) {
                assertTrue(tcp.serverPort > 0 && tcp.clientPort > 0 && tcp.serverPort != tcp.clientPort, a);
                key = new ConnectionKey(new java.net.InetSocketAddress(address, tcp.clientPort),
                        new java.net.InetSocketAddress(address, tcp.serverPort));
                assertTrue(ProcNetTcp.hasConnection(key), "no " + key + " in /proc/net/tcp*");
            }
            // the client end closed first: its side is in TIME_WAIT (not ESTABLISHED) or gone
            assertFalse(ProcNetTcp.hasConnection(key), key + " still established after close");
        }
    }
}
