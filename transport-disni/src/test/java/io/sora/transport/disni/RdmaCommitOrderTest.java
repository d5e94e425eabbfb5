package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.RingConnection;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 12, the RDMA race left open: a client pairs (sends COMMIT), writes and closes before the
 * server's completion thread has handed the COMMIT to the pairing. Events of the server side could
 * then come before the COMMIT is handled: the CM's DISCONNECTED (on the listener's CM thread; the
 * completion channel and the CM channel are separate descriptors, so their events have no order),
 * an error completion of the queue pair polled in the same batch after the COMMIT, and the
 * listener's CM loop failing. Each
 * aborted the pairing although the client had committed: the accept fell back to TCP and every byte
 * the client wrote was lost, where TCP delivers them all, then EOF.
 *
 * <p>The order is set explicitly, never by timing: {@link FakeVerbs#holdEvents} keeps the server's
 * completion thread in its wait for a completion event until the test has delivered the other event.
 * The server side is the production binding, link and medium over {@link FakeVerbs}; the client side
 * is the client's pairing steps, one by one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RdmaCommitOrderTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final int RING = 4096;
    /** Fifty writes: fifty data completions (more than three poll batches) behind the COMMIT. */
    private static final int WRITES = 50;
    private static final int WRITE_SIZE = 20;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private FakeVerbs serverVerbs;

    @AfterEach
    void closeAll() throws Exception {
        if (serverVerbs != null) serverVerbs.releaseEvents(); // a failed test must not keep the thread held
        for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
    }

    /** One RDMA connection to the binding, set up up to the client's COMMIT. */
    private final class Connection {
        final ConnectionKey serverKey;
        final Socket accepted;
        final RdmaServerBinding binding;
        final RdmaLink link;
        final RdmaMedium server;
        final RingConnection client;
        final byte[] written = new byte[WRITES * WRITE_SIZE];

        /**
         * A TCP connection, its RDMA connection accepted and established, HELLO and OFFER exchanged;
         * then the server's completion events are held, and the client commits, writes and closes.
         */
        Connection() throws Exception {
            ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            resources.add(ss);
            Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort());
            resources.add(c);
            Socket s = ss.accept();
            resources.add(s);
            accepted = s;
            InetSocketAddress bound = (InetSocketAddress) ss.getLocalSocketAddress();
            ConnectionKey clientKey = new ConnectionKey((InetSocketAddress) c.getLocalSocketAddress(),
                    (InetSocketAddress) c.getRemoteSocketAddress());
            serverKey = new ConnectionKey((InetSocketAddress) s.getRemoteSocketAddress(), (InetSocketAddress) s.getLocalSocketAddress());
            PairingOptions options = new PairingOptions(RING, RING, WAIT);
            binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(options), Tracer.OFF, 0, 0);
            resources.add(binding::close);

            FakeVerbs[] v = FakeVerbs.pair();
            serverVerbs = v[1];
            server = new RdmaMedium(10, new QueuePair(v[1], 10, Tracer.OFF), Tracer.OFF);
            resources.add(server::abort);
            link = binding.accepted(10, server, null, () -> { });
            RdmaMedium clientMedium = new RdmaMedium(11, new QueuePair(v[0], 11, Tracer.OFF), Tracer.OFF);
            resources.add(clientMedium::abort);
            link.established(new InetSocketAddress(clientKey.client().getAddress(), 0));

            // the client's pairing (RdmaClient.exchange), step by step
            Verbs.Region ring = clientMedium.allocateReceiveRing(RING);
            clientMedium.qp.postMessage(new RdmaWire.Hello(clientKey, ring.address(), ring.rkey(), RING));
            RdmaWire.Offer offer = assertInstanceOf(RdmaWire.Offer.class, clientMedium.nextMessage(System.nanoTime() + BOUND_NANOS));

            // the server's completion thread handed the HELLO over and now waits for the next completion event: hold it
            v[1].holdEvents();
            Thread completions = server.completionThread();
            RdmaMediumTest.await("the server's completion thread waits in a held event wait", () -> v[1].holdsEventsOf(completions));

            clientMedium.allocateSendRing(offer.ringSize(), offer.ringAddress(), offer.rkey());
            io.sora.transport.NativeTcp.of(c).write(RdmaWire.proof(offer.secret()));
            clientMedium.qp.postMessage(new RdmaWire.Commit(offer.secret()));
            clientMedium.paired();
            client = new RingConnection(11, "rdma", clientMedium, RdmaMediumTest.HOOKS, 0);
            OutputStream out = client.outputStream();
            for (int i = 0; i < WRITES; i++) {
                for (int j = 0; j < WRITE_SIZE; j++) written[i * WRITE_SIZE + j] = (byte) (i * 31 + j + 1);
                out.write(written, i * WRITE_SIZE, WRITE_SIZE);
            }
            client.close(); // returns once the server's queue pair received CLOSED, then disconnects
        }

        /** Lets the server's completion thread run again, then accepts as the application does. */
        FastConnection accept() {
            serverVerbs.releaseEvents();
            PairingResult r = binding.awaitPairing(serverKey, WAIT, new io.sora.transport.TestHooks(accepted));
            FastConnection c = assertInstanceOf(PairingResult.Paired.class, r,
                    () -> "the client committed, so accept must get the connection: " + r).connection();
            resources.add(c);
            return c;
        }
    }

    private static byte[] readToEof(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[256];
        for (int n; (n = in.read(buf)) >= 0; ) got.write(buf, 0, n);
        return got.toByteArray();
    }

    /**
     * DISCONNECTED reaches the server (its CM thread: here the test thread) while the COMMIT, the data
     * and the CLOSED flag are all still in the CQ, before the completion thread polled any of them.
     */
    @Test
    void aDisconnectThatOvertakesTheQueuedCommitLosesNoByte() throws Exception {
        Connection conn = new Connection();
        conn.link.disconnected();
        FastConnection server = conn.accept();
        assertArrayEquals(conn.written, readToEof(server.inputStream()), "every byte written before close, then EOF");
        assertEquals(-1, server.inputStream().read());
    }

    /**
     * The server's queue pair goes to the error state (its posted receives flushed) before the
     * completion thread polled the COMMIT: one drain polls the COMMIT, the data, the CLOSED flag and
     * then the flush errors; the error must not end the pairing the COMMIT before it completed.
     */
    @Test
    void anErrorCompletionPolledAfterTheCommitDoesNotUndoIt() throws Exception {
        Connection conn = new Connection();
        conn.server.qp.disconnect(); // what an error state does to the receives still posted: flushed, behind what arrived
        FastConnection server = conn.accept();
        assertArrayEquals(conn.written, readToEof(server.inputStream()), "every byte written before close, then EOF");
        assertEquals(-1, server.inputStream().read());
    }

    /**
     * The listener's CM loop fails (its event channel broke) while the client's COMMIT is still in the
     * CQ: the pairing the client committed is not aborted (a committed connection lives on).
     */
    @Test
    void aListenerLoopFailureAfterTheQueuedCommitDoesNotUndoIt() throws Exception {
        Connection conn = new Connection();
        conn.link.onLoopFailed("RDMA CM event channel failed: test");
        FastConnection server = conn.accept();
        assertArrayEquals(conn.written, readToEof(server.inputStream()), "every byte written before close, then EOF");
    }
}
