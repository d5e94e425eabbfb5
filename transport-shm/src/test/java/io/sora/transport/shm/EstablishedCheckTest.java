package io.sora.transport.shm;

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
 * A pairing request is served only for a connection the server's kernel has established: a client whose
 * connect returned while the server's full backlog kept no connection (a dropped ACK, a SYN cookie), or whose
 * key is not its TCP connection's (a SOCKS proxy between the ends), stays on TCP instead of writing into a
 * ring no accept ever claims.
 */
class EstablishedCheckTest {
    @Test
    void onlyAConnectionTheKernelHasEstablishedPasses() throws Exception {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (ServerSocket ss = new ServerSocket(0, 5, loopback);
             Socket c = new Socket(loopback, ss.getLocalPort());
             Socket s = ss.accept()) {
            InetSocketAddress server = (InetSocketAddress) s.getLocalSocketAddress();
            InetSocketAddress client = (InetSocketAddress) s.getRemoteSocketAddress();
            assertNull(ShmServerBinding.established(new ConnectionKey(client, server)));
            // the same server, a client port with no connection: what a dropped handshake leaves
            int other = client.getPort() == 65535 ? 65534 : client.getPort() + 1;
            String why = ShmServerBinding.established(new ConnectionKey(new InetSocketAddress(loopback, other), server));
            assertTrue(why != null && why.startsWith("no established TCP connection") && why.contains("it stays on TCP"), why);
        }
    }
}
