package io.sora.transport.disni;

import io.sora.transport.AcceptPolicy;
import io.sora.transport.Announcement;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.NativeSockets;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.TcpConnection;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The last step of the availability probe: one real TCP connection to the RDMA device's own address,
 * paired with itself over RDMA, a byte each way, then closed. It proves memory can be registered and
 * the CM and the protocol work here, and it warms every code path (class loading, the JVM-wide client
 * CM thread), so the application's first pairing is not the slow one. Runs before the agent
 * instruments sockets, so this connection is plain TCP; it is made in native code
 * ({@link NativeSockets#tcpPair}), not with {@code java.net.Socket}: the agent's start runs beside
 * {@code main}, which may be loading {@code ServerSocket}, held at the start gate until the start is done;
 * the start loading the same class waited for {@code main} in turn, until the gate gave up (10 s), and the
 * application's sockets loaded unpatched and stayed on TCP (seen in the Soft-RoCE VM, 2026-11-24).
 */
final class SelfTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    private SelfTest() {
    }

    /**
     * Pairs twice (the first warms every code path) and returns how long the second client pairing
     * took, in nanoseconds.
     */
    static long run(Transport t, InetAddress address) throws IOException {
        once(t, address);
        return once(t, address);
    }

    private static long once(Transport t, InetAddress address) throws IOException {
        PairingOptions options = new PairingOptions(4096, 4096, WAIT);
        // libsora is there (the probe requires it): the JDK's socket classes must not load here (see NativeSockets.tcpPair)
        try (NativeSockets.TcpPair tcp = NativeSockets.tcpPair(address)) {
            return pair(t, new InetSocketAddress(address, tcp.serverPort), new InetSocketAddress(address, tcp.clientPort),
                    options, hooks(tcp.clientEnd()), hooks(tcp.acceptedEnd()));
        }
    }

    /** Hooks of one end of the self-test's TCP connection: the proof is written and read on it. */
    private static SocketHooks hooks(TcpConnection tcp) {
        return new SocketHooks() {
            @Override
            public int soTimeoutMillis() {
                return (int) WAIT.toMillis();
            }

            @Override
            public void closeSocket() {
                // the self-test closes its connections itself
            }

            @Override
            public TcpConnection tcp() {
                return tcp;
            }
        };
    }

    /** Pairs the TCP connection {@code client -> server} (both ends in this process) and exchanges a byte each way. */
    private static long pair(Transport t, InetSocketAddress server, InetSocketAddress client, PairingOptions options,
                             SocketHooks clientHooks, SocketHooks serverHooks) throws IOException {
        ServerBinding b = t.listen(server, k -> new AcceptPolicy.Allow(options));
        boolean closed = false;
        try {
            PairingResult[] accepted = new PairingResult[1];
            ConnectionKey key = new ConnectionKey(client, server);
            long start = System.nanoTime();
            // as a client does: the RDMA connection before the accept can see the TCP connection (the TCP
            // connection is made already, but no accept looks at it before the announcement is made)
            Announcement announced = t.announce(server, options, () -> client);
            Thread accepting = new Thread(() -> accepted[0] = b.awaitPairing(key, WAIT, serverHooks), "sora-rdma-selftest");
            accepting.setDaemon(true);
            accepting.start();
            PairingResult connected = t.connect(key, options, clientHooks, announced);
            long took = System.nanoTime() - start;
            if (!(connected instanceof PairingResult.Paired)) {
                // no pairing is coming: the closed listener ends the accept's wait now (it waited its whole
                // WAIT, 20 s of the application's start-up, when the client failed at once)
                closed = true;
                b.close();
            }
            accepting.join(WAIT.toMillis() * 3);
            exchange(connected, accepted[0]);
            return took;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("RDMA self-test interrupted", e);
        } finally {
            if (!closed) b.close();
        }
    }

    private static void exchange(PairingResult client, PairingResult server) throws IOException {
        if (!(client instanceof PairingResult.Paired pc)) {
            throw new IOException("RDMA self-test: client did not pair: " + reason(client));
        }
        FastConnection a = pc.connection();
        try {
            if (!(server instanceof PairingResult.Paired ps)) {
                throw new IOException("RDMA self-test: server did not pair: " + reason(server));
            }
            try (FastConnection b = ps.connection()) {
                a.outputStream().write(0x5A);
                b.outputStream().write(0xA5);
                int x = b.inputStream().read();
                int y = a.inputStream().read();
                if (x != 0x5A || y != 0xA5) {
                    throw new IOException("RDMA self-test: sent 0x5A/0xA5, received " + x + "/" + y);
                }
            }
        } finally {
            a.close();
        }
    }

    private static String reason(PairingResult r) {
        return r instanceof PairingResult.Fallback f ? f.reason() : String.valueOf(r);
    }
}
