package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.ConnectionKey;
import io.sora.transport.Futex;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * The RDMA listener serves a pairing request only for a TCP connection that ends at this host, now found by
 * one exact kernel lookup (as the shm listener's check) instead of a scan of /proc/net/tcp and tcp6 on every
 * pairing; a key naming no connection (a client whose rule names another host that shares the port) is
 * refused with the kernel's answer.
 */
class RdmaEstablishedCheckTest {
    @Test
    void aConnectionThatEndsHereIsFoundAndOneThatDoesNotIsRefused() throws Exception {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (ServerSocket ss = new ServerSocket(0, 5, loopback);
             Socket c = new Socket(loopback, ss.getLocalPort());
             Socket s = ss.accept()) {
            InetSocketAddress server = (InetSocketAddress) s.getLocalSocketAddress();
            InetSocketAddress client = (InetSocketAddress) s.getRemoteSocketAddress();
            assertNull(RdmaServerBinding.established(new ConnectionKey(client, server)));
            int other = client.getPort() == 65535 ? 65534 : client.getPort() + 1;
            long t0 = System.nanoTime();
            String why = RdmaServerBinding.established(new ConnectionKey(new InetSocketAddress(loopback, other), server));
            assertTrue(why != null && why.startsWith("no TCP connection") && why.contains("in its kernel"), why);
            System.out.println("refused after " + (System.nanoTime() - t0) / 1000 + " us: " + why);
        }
    }
}
