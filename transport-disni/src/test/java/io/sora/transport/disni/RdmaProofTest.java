package io.sora.transport.disni;

import static io.sora.transport.disni.LoopbackRdmaServer.clientKey;
import static io.sora.transport.disni.LoopbackRdmaServer.serverKey;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.FastConnection;
import io.sora.transport.NativeTcp;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.TestHooks;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RDMA pairing's proof of the TCP connection (docs/rdma.md, "Proof of the TCP connection"): an RDMA
 * peer that names a TCP connection it does not own (another user's of the client host, read from its
 * {@code /proc/net/tcp}) gets an OFFER, but cannot write the proof on that connection, so the server
 * never pairs it: the application gets its TCP connection with every byte, or, if no byte came, a
 * connection shut down, never the attacker's. Over {@link FakeVerbs} for RDMA and real loopback TCP.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RdmaProofTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final PairingOptions OPTIONS = new PairingOptions(4096, 4096, WAIT);
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(20);

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

    /** The client side's HELLO for {@code t}'s connection on {@code l}, and the server's OFFER for it. */
    private static RdmaWire.Offer offer(FakeRdmaConnection l, Socket[] t) throws Exception {
        RdmaMedium m = l.client();
        m.qp.postMessage(new RdmaWire.Hello(clientKey(t), l.clientRing().address(), l.clientRing().rkey(), 4096));
        return assertInstanceOf(RdmaWire.Offer.class, m.nextMessage(System.nanoTime() + BOUND_NANOS));
    }

    /**
     * Someone else on the client host: an RDMA connection (from the client's address) that sends the HELLO
     * for {@code victim}'s connection, takes the OFFER and commits, as a client would, but writes no proof
     * on a TCP connection it does not have. Returns its connection, paired as far as it can tell.
     */
    private FastConnection attack(Socket[] victim, boolean writeProof) throws Exception {
        FakeRdmaConnection l = server.announce();
        RdmaMedium m = l.client();
        RdmaWire.Offer offer = offer(l, victim);
        m.allocateSendRing(offer.ringSize(), offer.ringAddress(), offer.rkey());
        if (writeProof) NativeTcp.of(victim[0]).write(RdmaWire.proof(offer.secret())); // a client that owns it
        m.qp.postMessage(new RdmaWire.Commit(offer.secret()));
        m.paired();
        FastConnection c = new io.sora.transport.RingConnection(m.id, "rdma", m, RdmaMediumTest.HOOKS, 0);
        resources.add(c);
        return c;
    }

    /**
     * A plain client that spoke first: the attacker committed, the accept finds the client's bytes where the
     * proof would be, so the attacker's connection is dropped and the application reads every byte on TCP.
     */
    @Test
    void aPairingRequestForAnotherClientsConnectionIsRefusedAndTheBytesStayTheApplications() throws Exception {
        listen();
        Socket[] victim = tcp();
        byte[] request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        victim[0].getOutputStream().write(request);
        FastConnection attacker = attack(victim, false);
        PairingResult r = binding.awaitPairing(serverKey(victim), WAIT, new TestHooks(victim[1]));
        String reason = assertInstanceOf(PairingResult.Fallback.class, r, () -> "the attacker was paired: " + r).reason();
        assertTrue(reason.contains("did not prove it owns the TCP connection"), reason);
        assertArrayEquals(request, victim[1].getInputStream().readNBytes(request.length), "the client's bytes, whole");
        // the attacker's connection is dropped: it reads the end (or fails), never the server's bytes
        int got;
        try {
            got = attacker.inputStream().read();
        } catch (IOException dropped) {
            got = -1;
        }
        assertEquals(-1, got);
        victim[1].getOutputStream().write('!');
        assertEquals('!', victim[0].getInputStream().read(), "the client's connection still works over TCP");
    }

    /**
     * A plain client that waits for the server to speak first: nothing shows where the proof would be, and
     * a proof could still come (the client might own the connection and be slow), so the connection is shut
     * down rather than handed to the application: never paired with the attacker.
     */
    @Test
    void aSilentClientsConnectionIsShutDownNotPairedWithTheAttacker() throws Exception {
        listen();
        binding.proofWait(TimeUnit.MILLISECONDS.toNanos(300));
        Socket[] victim = tcp();
        attack(victim, false);
        PairingResult r = binding.awaitPairing(serverKey(victim), WAIT, new TestHooks(victim[1]));
        String reason = assertInstanceOf(PairingResult.Fallback.class, r, () -> "the attacker was paired: " + r).reason();
        assertTrue(reason.contains("connection is shut down"), reason);
        assertEquals(-1, victim[1].getInputStream().read(), "the application reads the end");
        assertEquals(-1, victim[0].getInputStream().read(), "the client reads the end");
    }

    /** The client that owns the connection: its proof is taken, nothing of it reaches the application, the pairing stands. */
    @Test
    void theOwnersProofIsTakenAndThePairingStands() throws Exception {
        listen();
        Socket[] t = tcp();
        FastConnection client = attack(t, true);
        PairingResult r = binding.awaitPairing(serverKey(t), WAIT, new TestHooks(t[1]));
        FastConnection server = assertInstanceOf(PairingResult.Paired.class, r, () -> "" + r).connection();
        resources.add(server);
        client.outputStream().write(new byte[] {4, 5, 6});
        assertArrayEquals(new byte[] {4, 5, 6}, server.inputStream().readNBytes(3));
        // the proof was taken: the TCP stream's next bytes are the client's own, not the proof's
        t[0].getOutputStream().write(new byte[] {7, 8});
        assertArrayEquals(new byte[] {7, 8}, t[1].getInputStream().readNBytes(2));
    }

    /**
     * A committed client's proof still on its way when the accept looks (its thread's interrupt status set,
     * as applications leave it): the accept waits for it, since a committed client wrote it, rather than shut
     * the connection down.
     */
    @Test
    void anInterruptedAcceptWaitsForACommittedClientsProof() throws Exception {
        listen();
        Socket[] t = tcp();
        FakeRdmaConnection l = server.announce();
        RdmaMedium m = l.client();
        RdmaWire.Offer offer = offer(l, t);
        m.allocateSendRing(offer.ringSize(), offer.ringAddress(), offer.rkey());
        m.qp.postMessage(new RdmaWire.Commit(offer.secret())); // its proof is written below, once the accept looks
        m.paired();
        resources.add(new io.sora.transport.RingConnection(m.id, "rdma", m, RdmaMediumTest.HOOKS, 0));
        java.util.concurrent.CountDownLatch looking = new java.util.concurrent.CountDownLatch(1);
        io.sora.transport.TcpConnection tcp = NativeTcp.of(t[1]);
        io.sora.transport.SocketHooks hooks = new io.sora.transport.SocketHooks() {
            @Override
            public int soTimeoutMillis() {
                return 0;
            }

            @Override
            public void closeSocket() throws IOException {
                t[1].close();
            }

            @Override
            public io.sora.transport.TcpConnection tcp() {
                return new io.sora.transport.TcpConnection() {
                    @Override
                    public void write(byte[] bytes) throws IOException {
                        tcp.write(bytes);
                    }

                    @Override
                    public int peek(byte[] into, int atLeast, int millis) throws IOException {
                        int n = tcp.peek(into, atLeast, millis);
                        // only once a look found nothing: an accept that gave up after one look fails the test
                        if (n == 0) looking.countDown();
                        return n;
                    }

                    @Override
                    public boolean ended() {
                        return tcp.ended();
                    }

                    @Override
                    public void discard(int n) throws IOException {
                        tcp.discard(n);
                    }

                    @Override
                    public void shutdown() {
                        tcp.shutdown();
                    }

                    @Override
                    public long inode() {
                        return tcp.inode();
                    }
                };
            }
        };
        RdmaMediumTest.await("the server took the COMMIT", () -> binding.committedForTests(serverKey(t)));
        java.util.concurrent.atomic.AtomicReference<PairingResult> result = new java.util.concurrent.atomic.AtomicReference<>();
        Thread accepting = new Thread(() -> {
            Thread.currentThread().interrupt();
            result.set(binding.awaitPairing(serverKey(t), WAIT, hooks));
        }, "accepting");
        accepting.start();
        assertTrue(looking.await(20, TimeUnit.SECONDS), "the accept never looked at the TCP connection");
        NativeTcp.of(t[0]).write(RdmaWire.proof(offer.secret()));
        accepting.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        FastConnection server = assertInstanceOf(PairingResult.Paired.class, result.get(), () -> "" + result.get()).connection();
        resources.add(server);
        t[0].getOutputStream().write(9);
        assertEquals(9, t[1].getInputStream().read(), "the proof was taken: the next byte on TCP is the client's");
    }

    /**
     * An offer's look is made only on the connection its request named: an accept of another connection
     * with the same four-tuple (a later one reusing it, whose accept finds the earlier pairing's mark) hands
     * its connection over as it is, without waiting for a proof or shutting it down.
     */
    @Test
    void aPairingsLookIsNotMadeOnAnotherConnection() throws Exception {
        listen();
        binding.proofWait(TimeUnit.MILLISECONDS.toNanos(300));
        Socket[] t = tcp();
        long other = NativeTcp.of(t[0]).inode(); // an accepted socket's inode that is not t[1]'s
        ProofCheck check = new ProofCheck(new byte[RdmaWire.SECRET_SIZE], 1, "(test)", other, binding);
        check.offerMayBeOut(true);
        PairingResult f = new PairingResult.Fallback("client left after the OFFER");
        assertEquals(f, check.settle(f, new TestHooks(t[1]), WAIT), "not its connection: handed over as it is");
        t[1].getOutputStream().write(1);
        assertEquals(1, t[0].getInputStream().read(), "not shut down");
        // claimed by this other connection's accept (the named one closed, its four-tuple reused while the
        // pairing waited): not paired with that RDMA peer, and this connection left as it is
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        FastConnection impostor = new FastConnection() {
            @Override public long id() { return 9; }
            @Override public String path() { return "rdma"; }
            @Override public java.io.InputStream inputStream() { throw new UnsupportedOperationException(); }
            @Override public java.io.OutputStream outputStream() { throw new UnsupportedOperationException(); }
            @Override public void shutdownInput() { }
            @Override public void shutdownOutput() { }
            @Override public long bytesSent() { return 0; }
            @Override public long bytesReceived() { return 0; }
            @Override public void close() { closed.set(true); }
        };
        ProofCheck claimedByAnother = new ProofCheck(new byte[RdmaWire.SECRET_SIZE], 3, "(test)", other, binding);
        claimedByAnother.offerMayBeOut(true);
        PairingResult r = claimedByAnother.settle(new PairingResult.Paired(impostor), new TestHooks(t[1]), WAIT);
        String why = assertInstanceOf(PairingResult.Fallback.class, r, () -> "paired without a look: " + r).reason();
        assertTrue(why.contains("named an earlier connection"), why);
        assertTrue(closed.get(), "the RDMA peer's connection is dropped");
        t[1].getOutputStream().write(2);
        assertEquals(2, t[0].getInputStream().read(), "not shut down");
        // the same look for the connection it named (the accepted socket's inode) waits, finds nothing, shuts it down
        ProofCheck own = new ProofCheck(new byte[RdmaWire.SECRET_SIZE], 2, "(test)", NativeTcp.of(t[1]).inode(), binding);
        own.offerMayBeOut(true);
        String reason = assertInstanceOf(PairingResult.Fallback.class, own.settle(f, new TestHooks(t[1]), WAIT)).reason();
        assertTrue(reason.contains("shut down"), reason);
        assertEquals(-1, t[0].getInputStream().read());
    }

    /**
     * A client that wrote its proof and then left before its COMMIT was handled: the proof is taken (it
     * never reaches the application) and the connection is shut down, as the client may believe it paired.
     */
    @Test
    void aProofWithoutACommitIsTakenAndTheConnectionShutDown() throws Exception {
        listen();
        Socket[] t = tcp();
        FakeRdmaConnection l = server.announce();
        RdmaMedium m = l.client();
        RdmaWire.Offer offer = offer(l, t);
        NativeTcp.of(t[0]).write(RdmaWire.proof(offer.secret()));
        m.abort();
        RdmaMediumTest.await("the server saw the client leave", () -> binding.decidedTcp(serverKey(t)));
        PairingResult r = binding.awaitPairing(serverKey(t), WAIT, new TestHooks(t[1]));
        String reason = assertInstanceOf(PairingResult.Fallback.class, r).reason();
        assertTrue(reason.contains("had written the pairing's proof") && reason.contains("shut down"), reason);
        assertEquals(-1, t[1].getInputStream().read(), "the application reads the end, not the proof");
    }
}
