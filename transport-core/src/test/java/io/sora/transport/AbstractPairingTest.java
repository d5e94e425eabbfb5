package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pairing protocol as the two ends of a connection see it, the same on every medium (netty's
 * testsuite pattern): a medium's test extends this and supplies a {@link Medium}, a server binding on
 * a real loopback server socket and that medium's client. Every connection here is a real TCP
 * connection, made and accepted, whose key both ends build as the agents do.
 *
 * <p>Assertions are on results and reasons, never on time. No sleeps: a wait for something the server
 * does on its own thread is a bounded loop on the condition ({@link #await}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class AbstractPairingTest {
    /** Long: an accept that fell back to waiting it out reports "no pairing request within 5000 ms". */
    protected static final Duration WAIT = Duration.ofSeconds(5);
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final String REFUSAL = "client 127.0.0.1 not in the accept rule's client list (server.conf:3)";

    /** One medium under test: a server binding for the fixture's server socket, and its client side. */
    protected interface Medium extends AutoCloseable {
        /** The binding answering the fixture's server socket with the policy it was opened with. */
        ServerBinding binding();

        /** The client side of pairing connection {@code key} (as the client agent does right after its connect). */
        PairingResult connect(ConnectionKey key, PairingOptions options);

        /**
         * A client that sends the request for {@code key} and receives the OFFER; closing it leaves
         * without COMMIT (as a client whose wait ran out, or whose check of the offer failed).
         */
        AutoCloseable offered(ConnectionKey key) throws Exception;

        /** What accept reports for a pairing whose client left after the OFFER. */
        String abandonedReason();

        /** What accept reports, after waiting {@code wait} where the medium waits, for a connection nobody asked to pair. */
        String noRequestReason(Duration wait);

        /** Whether the server has decided {@code key} TCP (its table holds a mark for it). */
        boolean decidedTcp(ConnectionKey key);

        /** Whether everything the server set up for pairings that did not end in a claimed connection is released. */
        boolean releasedUnclaimed();

        /**
         * Whether {@code accepting} waits for the COMMIT of an offered pairing now: in a timed wait for the
         * medium's thread to tell it, or (a medium whose accepting thread reads the COMMIT itself) in that read.
         */
        default boolean awaitsCommit(Thread accepting) {
            return accepting.getState() == Thread.State.TIMED_WAITING;
        }

        @Override
        void close() throws IOException;
    }

    /** The medium's server binding for {@code bound}, deciding requests with {@code policy}, and its client. */
    protected abstract Medium open(InetSocketAddress bound, AcceptPolicy policy) throws IOException;

    private ServerSocket serverSocket;
    private Medium medium;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable r : resources) r.close();
        if (medium != null) medium.close();
        if (serverSocket != null) serverSocket.close();
    }

    private Medium medium(AcceptPolicy policy) throws IOException {
        serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        medium = open((InetSocketAddress) serverSocket.getLocalSocketAddress(), policy);
        return medium;
    }

    private Medium medium() throws IOException {
        return medium(key -> new AcceptPolicy.Allow(options()));
    }

    protected static PairingOptions options() {
        return new PairingOptions(4096, 4096, WAIT);
    }

    /** A TCP connection, made and accepted: [0] client, [1] server side. */
    private Socket[] tcp() throws IOException {
        Socket c = new Socket(serverSocket.getInetAddress(), serverSocket.getLocalPort());
        Socket s = serverSocket.accept();
        resources.add(c);
        resources.add(s);
        return new Socket[] {c, s};
    }

    /** The hooks of the client socket of {@code key} (one this test made), whose TCP connection they reach. */
    protected final SocketHooks clientHooks(ConnectionKey key) {
        for (Object r : resources) {
            if (r instanceof Socket c && clientKey(c).equals(key)) return new TestHooks(c);
        }
        throw new AssertionError("no client socket of this test for " + key);
    }

    /** The key as the client agent builds it: (local, remote). */
    protected static ConnectionKey clientKey(Socket c) {
        return new ConnectionKey((InetSocketAddress) c.getLocalSocketAddress(), (InetSocketAddress) c.getRemoteSocketAddress());
    }

    /** The key as the server agent builds it from the accepted socket: (remote, local). */
    protected static ConnectionKey serverKey(Socket s) {
        return new ConnectionKey((InetSocketAddress) s.getRemoteSocketAddress(), (InetSocketAddress) s.getLocalSocketAddress());
    }

    private PairingResult accept(Socket s, Duration wait) {
        return medium.binding().awaitPairing(serverKey(s), wait, new TestHooks(s));
    }

    private FastConnection paired(PairingResult r, String side) {
        FastConnection c = assertInstanceOf(PairingResult.Paired.class, r, () -> side + ": " + r).connection();
        resources.add(c);
        return c;
    }

    /** Until {@code condition} holds, bounded so that a regression fails instead of hanging. */
    protected static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + BOUND_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) fail("gave up waiting: " + what);
            Thread.yield();
        }
    }

    private static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] b = new byte[n];
        for (int got = 0; got < n; ) {
            int r = in.read(b, got, n - got);
            if (r < 0) throw new IOException("EOF after " + got + " of " + n + " bytes");
            got += r;
        }
        return b;
    }

    @Test
    void aPairedConnectionCarriesBytesBothWays() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        FastConnection client = paired(m.connect(clientKey(t[0]), options()), "client");
        FastConnection server = paired(accept(t[1], WAIT), "server");
        byte[] ping = "ping".getBytes(StandardCharsets.US_ASCII);
        byte[] pong = "pong!".getBytes(StandardCharsets.US_ASCII);
        client.outputStream().write(ping);
        assertArrayEquals(ping, readExactly(server.inputStream(), ping.length));
        server.outputStream().write(pong);
        assertArrayEquals(pong, readExactly(client.inputStream(), pong.length));
    }

    @Test
    void aConnectionNobodyAskedToPairIsTcpWithTheMediumsReason() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        Duration wait = Duration.ofMillis(50);
        assertEquals(m.noRequestReason(wait), assertInstanceOf(PairingResult.Fallback.class, accept(t[1], wait)).reason());
    }

    /** The policy's refusal is decided for the key: accept reports it as the client does, without waiting for a request. */
    @Test
    void thePolicysRefusalIsTheReasonOnBothEnds() throws Exception {
        Medium m = medium(key -> new AcceptPolicy.Refuse(REFUSAL));
        Socket[] t = tcp();
        assertEquals(REFUSAL, assertInstanceOf(PairingResult.Fallback.class, m.connect(clientKey(t[0]), options())).reason());
        assertEquals(REFUSAL, assertInstanceOf(PairingResult.Fallback.class, accept(t[1], WAIT)).reason());
    }

    @Test
    void aRequestAfterAcceptGaveUpIsRefusedSoBothEndsAgreeOnTcp() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        assertInstanceOf(PairingResult.Fallback.class, accept(t[1], Duration.ofMillis(10)));
        String reason = assertInstanceOf(PairingResult.Fallback.class, m.connect(clientKey(t[0]), options())).reason();
        assertTrue(reason.startsWith("server already accepted on TCP (pairing request arrived after "), reason);
    }

    /**
     * A client that leaves after the OFFER (its wait ran out, its segment or ring did not check out):
     * an accept that comes after the server noticed reports why, at once, not "no pairing request
     * within N ms" as if the client had never asked.
     */
    @Test
    void anAcceptAfterTheClientLeftTheOfferReportsWhy() throws Exception {
        Socket[] t = leftAfterTheOffer();
        assertEquals(medium.abandonedReason(), assertInstanceOf(PairingResult.Fallback.class, accept(t[1], WAIT)).reason());
    }

    /** An abandoned pairing releases what the server set up for it at once, not when the server socket closes. */
    @Test
    void aPairingTheClientLeftIsReleasedAtOnce() throws Exception {
        leftAfterTheOffer();
        await("the server released the pairing", medium::releasedUnclaimed);
    }

    /** A connection whose client left after the OFFER, once the server noticed; [0] client, [1] server side. */
    private Socket[] leftAfterTheOffer() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        m.offered(clientKey(t[0])).close();
        await("the server noticed the client left", () -> m.decidedTcp(serverKey(t[1])));
        return t;
    }

    /** An accepting thread interrupted while it waits for the COMMIT: TCP, the interrupt kept, the pairing released. */
    @Test
    void anInterruptedAcceptFallsBackAndReleasesThePairing() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        try (AutoCloseable client = m.offered(clientKey(t[0]))) {
            PairingResult[] result = new PairingResult[1];
            boolean[] interrupted = new boolean[1];
            Thread accepting = new Thread(() -> {
                result[0] = accept(t[1], WAIT);
                interrupted[0] = Thread.currentThread().isInterrupted();
            }, "accepting");
            accepting.start();
            await("accept waits for the COMMIT", () -> m.awaitsCommit(accepting));
            accepting.interrupt();
            accepting.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
            // a medium may add what it did to the TCP connection (RDMA: a proof may still come, so it is shut down)
            String reason = assertInstanceOf(PairingResult.Fallback.class, result[0]).reason();
            assertTrue(reason.startsWith("interrupted while waiting for pairing"), reason);
            assertTrue(interrupted[0], "the interrupt status is kept");
            await("the server released the pairing", m::releasedUnclaimed);
        }
    }

    /** As TCP keeps a connection in the accept queue: bytes a client wrote and its close wait for the accept. */
    @Test
    void aClientThatWritesAndClosesBeforeAcceptLosesNothing() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        FastConnection client = paired(m.connect(clientKey(t[0]), options()), "client");
        byte[] msg = "written before accept".getBytes(StandardCharsets.US_ASCII);
        client.outputStream().write(msg);
        client.close();
        FastConnection server = paired(accept(t[1], WAIT), "server");
        assertArrayEquals(msg, readExactly(server.inputStream(), msg.length));
        assertEquals(-1, server.inputStream().read());
    }

    /** As TCP resets connections still in the accept queue when the server socket closes. */
    @Test
    void closingTheBindingDropsPairingsNobodyClaimed() throws Exception {
        Medium m = medium();
        Socket[] t = tcp();
        FastConnection client = paired(m.connect(clientKey(t[0]), options()), "client");
        m.binding().close();
        assertEquals(-1, client.inputStream().read());
        assertEquals("Connection reset by peer",
                assertThrows(IOException.class, () -> client.outputStream().write(new byte[1])).getMessage());
        await("the server released the pairing", m::releasedUnclaimed);
    }

    /** Many pairings at once, each claimed by its own accept; nothing is left in the table. */
    @Test
    void twentyConnectionsPairEachWithItsOwnAccept() throws Exception {
        Medium m = medium();
        List<Socket[]> conns = new ArrayList<>();
        List<FastConnection> clients = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Socket[] t = tcp();
            conns.add(t);
            clients.add(paired(m.connect(clientKey(t[0]), options()), "client " + i));
        }
        for (int i = 0; i < 20; i++) {
            byte[] msg = ("hello " + i).getBytes(StandardCharsets.US_ASCII);
            clients.get(i).outputStream().write(msg);
            FastConnection server = paired(accept(conns.get(i)[1], WAIT), "server " + i);
            assertArrayEquals(msg, readExactly(server.inputStream(), msg.length));
        }
    }
}
