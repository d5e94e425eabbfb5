package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real loopback TCP server socket with an shm listener on its port, in a temporary directory; each
 * {@link #pair()} makes a real TCP connection (so the /proc/net/tcp check passes) and pairs it.
 */
final class ShmFixture implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(5);

    final Path dir;
    final RecordingTracer tracer = new RecordingTracer();
    final ShmTransport transport;
    final ServerSocket serverSocket;
    final ServerBinding binding;
    final int clientRing;
    private final List<java.io.Closeable> resources = new ArrayList<>();

    ShmFixture(Path dir, int serverRing, int clientRing) throws IOException {
        this(dir, clientRing, key -> new AcceptPolicy.Allow(new PairingOptions(clientRing, serverRing, WAIT)));
    }

    ShmFixture(Path dir, int serverRing, int clientRing, ShmSettings settings) throws IOException {
        this(dir, clientRing, key -> new AcceptPolicy.Allow(new PairingOptions(clientRing, serverRing, WAIT)), settings);
    }

    ShmFixture(Path dir, int clientRing, AcceptPolicy policy) throws IOException {
        this(dir, clientRing, policy, new ShmSettings(dir, 200));
    }

    ShmFixture(Path dir, int clientRing, AcceptPolicy policy, ShmSettings settings) throws IOException {
        this.dir = dir;
        this.clientRing = clientRing;
        this.transport = new ShmTransport(settings, tracer);
        this.serverSocket = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        this.binding = transport.listen((InetSocketAddress) serverSocket.getLocalSocketAddress(), policy);
    }

    /** Both ends of one connection, each with its own hooks. */
    record Pair(FastConnection client, FastConnection server, TestHooks clientHooks, TestHooks serverHooks, Socket clientTcp,
                Socket serverTcp) {}

    /** A TCP connection, made and accepted: [0] client, [1] server side. */
    Socket[] tcp() throws IOException {
        Socket c = new Socket(serverSocket.getInetAddress(), serverSocket.getLocalPort());
        Socket s = serverSocket.accept();
        resources.add(c);
        resources.add(s);
        return new Socket[] {c, s};
    }

    static ConnectionKey clientKey(Socket c) {
        return new ConnectionKey((InetSocketAddress) c.getLocalSocketAddress(), (InetSocketAddress) c.getRemoteSocketAddress());
    }

    static ConnectionKey serverKey(Socket s) {
        return new ConnectionKey((InetSocketAddress) s.getRemoteSocketAddress(), (InetSocketAddress) s.getLocalSocketAddress());
    }

    PairingOptions clientOptions() {
        return new PairingOptions(32768, clientRing, WAIT);
    }

    Pair pair() throws IOException {
        Socket[] t = tcp();
        TestHooks ch = new TestHooks();
        TestHooks sh = new TestHooks();
        PairingResult c = transport.connect(clientKey(t[0]), clientOptions(), ch);
        PairingResult s = binding.awaitPairing(serverKey(t[1]), WAIT, sh);
        assertTrue(c instanceof PairingResult.Paired, "client: " + c);
        assertTrue(s instanceof PairingResult.Paired, "server: " + s);
        ch.connection = ((PairingResult.Paired) c).connection();
        sh.connection = ((PairingResult.Paired) s).connection();
        resources.add(ch.connection);
        resources.add(sh.connection);
        return new Pair(ch.connection, sh.connection, ch, sh, t[0], t[1]);
    }

    @Override
    public void close() throws IOException {
        for (java.io.Closeable r : resources) r.close();
        binding.close();
        serverSocket.close();
    }
}
