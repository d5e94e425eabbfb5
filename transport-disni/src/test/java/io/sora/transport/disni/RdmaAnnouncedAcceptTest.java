package io.sora.transport.disni;

import static io.sora.transport.disni.LoopbackRdmaServer.clientKey;
import static io.sora.transport.disni.LoopbackRdmaServer.serverKey;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.TestHooks;
import java.io.IOException;
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
    private LoopbackRdmaServer server;
    private RdmaServerBinding binding;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
    }

    private void listen() throws IOException {
        server = new LoopbackRdmaServer(OPTIONS);
        resources.add(server);
        binding = server.binding;
    }

    private Socket[] tcp() throws IOException {
        return server.tcp();
    }

    private FakeRdmaConnection announce() throws IOException {
        return server.announce();
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
