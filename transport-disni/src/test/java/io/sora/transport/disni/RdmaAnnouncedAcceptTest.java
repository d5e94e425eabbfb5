package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.TestHooks;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What an accept waits for on the RDMA medium (docs/rdma.md, "Pairing"): a sora client makes its RDMA
 * connection before its TCP connect, so an accept waits only while such a connection has not yet sent its
 * request, and decides TCP at once when none is pending: a client without sora never waits (it waited the
 * whole pairing wait until 2026-11-29). Over {@link FakeVerbs}; the Soft-RoCE VM's
 * {@code RdmaAcceptNeverWaitsTest} runs the real CM.
 */
class RdmaAnnouncedAcceptTest {
    /** Long: an accept that waited it out would say "no pairing request within 20000 ms". */
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final PairingOptions OPTIONS = new PairingOptions(4096, 4096, WAIT);
    private static final String NOT_ANNOUNCED = "client announced no pairing (no sora, or no rdma rule for this server)";

    private final List<AutoCloseable> resources = new ArrayList<>();
    private RdmaServerBinding binding;
    private ServerSocket serverSocket;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
    }

    private void listen() throws IOException {
        serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        resources.add(serverSocket);
        InetSocketAddress bound = (InetSocketAddress) serverSocket.getLocalSocketAddress();
        // announcements count for a minute: a loaded machine's slow steps must not age them out
        binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(OPTIONS), Tracer.OFF, 0, 0, 60_000_000_000L);
        resources.add(binding::close);
    }

    /** A TCP connection, made and accepted: [0] client, [1] server side. */
    private Socket[] tcp() throws IOException {
        Socket c = new Socket(serverSocket.getInetAddress(), serverSocket.getLocalPort());
        resources.add(c);
        Socket s = serverSocket.accept();
        resources.add(s);
        return new Socket[] {c, s};
    }

    /** An RDMA connection announced from the client host (before a TCP connect), its HELLO not sent yet. */
    private FakeRdmaConnection announce() throws IOException {
        FakeRdmaConnection l = FakeRdmaConnection.open(binding, InetAddress.getLoopbackAddress(), OPTIONS.receiveBufferSize(), true);
        resources.add(l.client()::abort);
        return l;
    }

    private static ConnectionKey clientKey(Socket[] t) {
        return new ConnectionKey((InetSocketAddress) t[0].getLocalSocketAddress(), (InetSocketAddress) t[0].getRemoteSocketAddress());
    }

    private static ConnectionKey serverKey(Socket[] t) {
        return new ConnectionKey((InetSocketAddress) t[1].getRemoteSocketAddress(), (InetSocketAddress) t[1].getLocalSocketAddress());
    }

    /** The server's accept of {@code t} on its own thread, started and seen waiting. */
    private Thread accepting(Socket[] t, Duration wait, AtomicReference<PairingResult> result) {
        Thread a = new Thread(() -> result.set(binding.awaitPairing(serverKey(t), wait, new TestHooks(t[1]))), "accepting");
        a.setDaemon(true);
        a.start();
        RdmaMediumTest.await("the accept waits", () -> a.getState() == Thread.State.TIMED_WAITING);
        return a;
    }

    /** The client's pairing of {@code t} (its proof written on {@code t}'s TCP connection). */
    private static PairingResult exchange(FakeRdmaConnection l, Socket[] t) throws Exception {
        PairingResult r = RdmaClient.exchange(l.client(), l.clientRing(), clientKey(t), OPTIONS, System.nanoTime() + WAIT.toNanos(),
                new TestHooks(t[0]), 0);
        if (!(r instanceof PairingResult.Paired)) l.client().abort();
        return r;
    }

    @Test
    void anAcceptWithNoRdmaConnectionPendingIsTcpAtOnce() throws Exception {
        listen();
        Socket[] t = tcp();
        PairingResult r = binding.awaitPairing(serverKey(t), WAIT, new TestHooks(t[1]));
        assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, r).reason());
    }

    @Test
    void anAcceptWaitsForTheRequestOfAConnectionAnnouncedBeforeIt() throws Exception {
        listen();
        FakeRdmaConnection l = announce();
        Socket[] t = tcp();
        AtomicReference<PairingResult> accepted = new AtomicReference<>();
        Thread a = accepting(t, WAIT, accepted);
        FastConnection client = assertInstanceOf(PairingResult.Paired.class, exchange(l, t)).connection();
        resources.add(client);
        a.join(WAIT.toMillis());
        FastConnection server = assertInstanceOf(PairingResult.Paired.class, accepted.get(), () -> "server: " + accepted.get()).connection();
        resources.add(server);
        client.outputStream().write(new byte[] {1, 2, 3});
        assertArrayEquals(new byte[] {1, 2, 3}, server.inputStream().readNBytes(3)); // fewer at an early EOF
    }

    /** A plain client's accept while another client's RDMA connection is pending: TCP once that one leaves, not after the wait. */
    @Test
    void anAcceptWaitsOnlyWhileAnAnnouncedConnectionIsPending() throws Exception {
        listen();
        FakeRdmaConnection other = announce();
        Socket[] plain = tcp();
        AtomicReference<PairingResult> accepted = new AtomicReference<>();
        Thread a = accepting(plain, WAIT, accepted);
        other.client().abort(); // its TCP connect failed: the RDMA connection is dropped
        a.join(WAIT.toMillis());
        assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, accepted.get(), () -> "" + accepted.get()).reason());
    }

    /** The accept's wait ran out before the announced client's request came: both ends TCP. */
    @Test
    void aRequestAfterTheAcceptGaveUpOnItIsRefused() throws Exception {
        listen();
        FakeRdmaConnection l = announce();
        Socket[] t = tcp();
        AtomicReference<PairingResult> accepted = new AtomicReference<>();
        Thread a = accepting(t, Duration.ofMillis(50), accepted);
        a.join(WAIT.toMillis());
        assertEquals("no pairing request within 50 ms", assertInstanceOf(PairingResult.Fallback.class, accepted.get()).reason());
        String reason = assertInstanceOf(PairingResult.Fallback.class, exchange(l, t)).reason();
        assertTrue(reason.startsWith("server already accepted on TCP (pairing request arrived after "), reason);
    }
}
