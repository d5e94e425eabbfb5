package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.Announcement;
import io.sora.transport.PairingResult;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Accept decides at once for a client that will not pair, and waits only for clients that announced
 * themselves before their TCP connect. Assertions are on results and reasons; the accept wait as such
 * is a benchmark row ({@code FieldBench} accept), never timed here. {@link ShmFixture#WAIT} is 5 s, so
 * a binding that fell back to waiting it out would give "no pairing request within 5000 ms".
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmAnnounceTest {
    private static final String NOT_ANNOUNCED = "client announced no pairing (no sora, or no shm rule for this server)";

    @TempDir
    Path tmp;

    @Test
    void aConnectionNobodyAnnouncedIsTcpAtOnce() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
            assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, s).reason());
            // the client's late request is refused, so both ends agree on TCP
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks());
            assertInstanceOf(PairingResult.Fallback.class, c);
        }
    }

    @Test
    void anAnnouncedClientWhoseHelloComesAfterAcceptIsAwaitedAndPaired() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Announcement a = announce(fx);
            Socket[] t = fx.tcp();
            CompletableFuture<PairingResult> server = acceptWhileAnnounced(fx, t);
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
            assertInstanceOf(PairingResult.Paired.class, c).connection().close();
            assertInstanceOf(PairingResult.Paired.class, server.get(10, TimeUnit.SECONDS)).connection().close();
        }
    }

    @Test
    void aPlainClientAcceptedWhileAnotherIsAnnouncedWaitsOnlyUntilThatOneSentItsHello() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Announcement a = announce(fx);
            CompletableFuture<PairingResult> server = acceptPlainWhileAnnounced(fx);
            Socket[] paired = fx.tcp();
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(paired[0]), fx.clientOptions(), new TestHooks(), a);
            assertInstanceOf(PairingResult.Paired.class, c).connection().close();
            PairingResult s = server.get(10, TimeUnit.SECONDS);
            assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, s).reason());
        }
    }

    @Test
    void aWithdrawnAnnouncementReleasesTheWaitingAccept() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Announcement a = announce(fx);
            CompletableFuture<PairingResult> server = acceptPlainWhileAnnounced(fx);
            a.close(); // the announcing client's connect failed
            PairingResult s = server.get(10, TimeUnit.SECONDS);
            assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, s).reason());
        }
    }

    @Test
    void anAnnouncedClientReusingTheFourTupleOfAnEarlierTcpConnectionPairs() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            // an earlier connection with this four-tuple was decided TCP (its mark stays for late requests)
            assertInstanceOf(PairingResult.Fallback.class,
                    fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks()));
            // a new connection gets the same ports (loopback reuses TIME_WAIT ports): announced first
            Announcement a = announce(fx);
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
            assertInstanceOf(PairingResult.Paired.class, c).connection().close();
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
            assertInstanceOf(PairingResult.Paired.class, s).connection().close();
        }
    }

    @Test
    void aReusedFourTupleWhoseEarlierAcceptWaitedForAnotherClientStillPairs() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            // another client's announcement is pending when an earlier connection with our four-tuple
            // is accepted: that accept waits for it
            Announcement other = announce(fx);
            Socket[] t = fx.tcp();
            CompletableFuture<PairingResult> earlier = acceptWhileAnnounced(fx, t);
            // meanwhile this client announces; then the other withdraws, and the earlier accept marks
            // the four-tuple TCP: after this announcement, though its accept began before it
            Announcement a = announce(fx);
            other.close();
            assertInstanceOf(PairingResult.Fallback.class, earlier.get(10, TimeUnit.SECONDS));
            // this client's connection gets the same ports (loopback reuses TIME_WAIT ports)
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
            assertInstanceOf(PairingResult.Paired.class, c, "the earlier connection's mark must not refuse it").connection().close();
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
            assertInstanceOf(PairingResult.Paired.class, s).connection().close();
        }
    }

    /**
     * A client does not wait for NOTED: its ANNOUNCE may still be unread by the listener's thread when
     * accept() returns its connection. Here the listener has no thread at all, so only the accepting
     * thread's catch-up can read it: the accept must wait for the announced client, not decide TCP.
     */
    @Test
    void anAnnouncementNoListenerThreadReadYetIsSeenByTheAccept() throws Exception {
        withAnnouncedConnection((transport, b, a, c, s) -> {
            CompletableFuture<PairingResult> server = awaitingAccept(b, s);
            a.close(); // the client withdraws; only a catch-up reads that too
            b.catchUp();
            PairingResult r = server.get(10, TimeUnit.SECONDS);
            assertEquals(NOT_ANNOUNCED, assertInstanceOf(PairingResult.Fallback.class, r).reason());
        });
    }

    /**
     * The client's HELLO comes while the accept waits for it, and no listener thread reads it (on one
     * CPU shared by two cold JVMs, the listener's thread may not run for tens of milliseconds while
     * the HELLO sits in its channel: a non-blocking accept's 20 ms ran out and the connection stayed
     * TCP). The waiting accept reads the channels itself between short waits, so it pairs.
     */
    @Test
    void aHelloThatOnlyTheWaitingAcceptReadsIsPaired() throws Exception {
        withAnnouncedConnection((transport, b, a, c, s) -> {
            CompletableFuture<PairingResult> server = awaitingAccept(b, s);
            // nobody but the waiting accept reads the rendezvous from here on
            PairingResult cr = transport.connect(ShmFixture.clientKey(c), OPTIONS, new TestHooks(), a);
            assertInstanceOf(PairingResult.Paired.class, cr, "the client's pairing").connection().close();
            // before the waiting accept read the channels itself, it waited out its 5 s: TCP
            PairingResult sr = server.get(4, TimeUnit.SECONDS);
            assertInstanceOf(PairingResult.Paired.class, sr, "the server's pairing").connection().close();
        });
    }

    /**
     * An accept that gives up at once (a non-blocking accept waits for nothing) after its catch-up read
     * the client's ANNOUNCE decides TCP: the client's HELLO that follows is that same connection's and
     * must be refused, not taken for a new connection reusing the four-tuple (which would pair the
     * client while the server reads TCP). The listener has no thread: only catch-ups read.
     */
    @Test
    void aHelloAfterAnAcceptThatGaveUpIsRefusedEvenIfItsAnnouncementWasReadLate() throws Exception {
        withAnnouncedConnection((transport, b, a, c, s) -> {
            PairingResult server = b.awaitPairing(ShmFixture.serverKey(s), java.time.Duration.ZERO, new TestHooks());
            assertInstanceOf(PairingResult.Fallback.class, server);
            CompletableFuture<PairingResult> client = CompletableFuture.supplyAsync(
                    () -> transport.connect(ShmFixture.clientKey(c), OPTIONS, new TestHooks(), a));
            for (int i = 0; i < 10_000 && !client.isDone(); i++) {
                b.catchUp(); // reads the HELLO once it is there
                Thread.sleep(1);
            }
            PairingResult r = client.get(10, TimeUnit.SECONDS);
            if (r instanceof PairingResult.Paired p) p.connection().close();
            String reason = assertInstanceOf(PairingResult.Fallback.class, r,
                    "the server decided TCP: the client must not pair").reason();
            assertTrue(reason.startsWith("server already accepted on TCP"), reason);
        });
    }

    /** What a test does with one announced connection to a listener without a thread ({@link #withAnnouncedConnection}). */
    private interface AnnouncedCase {
        void run(ShmTransport transport, ShmServerBinding binding, Announcement announcement, Socket client,
                 Socket accepted) throws Exception;
    }

    /**
     * A loopback server socket, a listener for it without a thread of its own (only catch-ups read its
     * rendezvous), a client's announcement to it (which must be made), the client's TCP connect and its
     * accepted socket; then {@code test}, and the listener closed.
     */
    private void withAnnouncedConnection(AnnouncedCase test) throws Exception {
        ShmTransport transport = new ShmTransport(new ShmSettings(tmp, 200), new RecordingTracer());
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            InetSocketAddress bound = (InetSocketAddress) ss.getLocalSocketAddress();
            ShmServerBinding b = threadless(bound, OPTIONS);
            try (Socket c = new Socket()) {
                Announcement a = transport.announce(bound, OPTIONS);
                assertNotNull(a, "a listener is there: the announcement is made");
                c.connect(bound);
                try (Socket s = ss.accept()) {
                    test.run(transport, b, a, c, s);
                }
            } finally {
                b.close();
            }
        }
    }

    /** The accept of {@code s} on its own thread, once it waits for the announced client (a condition, not a sleep). */
    private static CompletableFuture<PairingResult> awaitingAccept(ShmServerBinding b, Socket s) throws Exception {
        CompletableFuture<PairingResult> server = CompletableFuture.supplyAsync(
                () -> b.awaitPairing(ShmFixture.serverKey(s), ShmFixture.WAIT, new TestHooks()));
        // the count as seen once, not read again: the accept waits in slices and reads the channels
        // between them, when the count is 0 for a moment
        boolean waiting = false;
        for (int i = 0; i < 10_000 && !(waiting = b.waitingAccepts() == 1) && !server.isDone(); i++) {
            Thread.sleep(1);
        }
        assertTrue(waiting && !server.isDone(), "the accept should wait for the announced client, got "
                + (server.isDone() ? server.get() : "nothing"));
        return server;
    }

    @Test
    void nothingIsAnnouncedToAPortWithoutListener() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            int other = freePort();
            assertNull(fx.transport.announce(new InetSocketAddress(fx.serverSocket.getInetAddress(), other), fx.clientOptions()));
        }
    }

    private static final io.sora.transport.PairingOptions OPTIONS =
            new io.sora.transport.PairingOptions(4096, 4096, ShmFixture.WAIT);

    /** A listener for {@code bound} without a thread of its own: only catch-ups read its rendezvous. */
    private ShmServerBinding threadless(InetSocketAddress bound, io.sora.transport.PairingOptions options)
            throws java.io.IOException {
        ShmDirectory dir = new ShmDirectory(tmp);
        dir.ensure();
        return new ShmServerBinding(dir, bound, key -> new io.sora.transport.AcceptPolicy.Allow(options),
                io.sora.trace.Tracer.OFF, new ShmSettings(tmp, 200), false);
    }

    private static InetSocketAddress address(ShmFixture fx) {
        return (InetSocketAddress) fx.serverSocket.getLocalSocketAddress();
    }

    /** A plain TCP connection accepted while an announcement is pending: its accept, once it waits. */
    private static CompletableFuture<PairingResult> acceptPlainWhileAnnounced(ShmFixture fx) throws Exception {
        return acceptWhileAnnounced(fx, fx.tcp());
    }

    /** The accept of connection {@code t} (client, server) while an announcement is pending, once it waits. */
    private static CompletableFuture<PairingResult> acceptWhileAnnounced(ShmFixture fx, Socket[] t) throws Exception {
        CompletableFuture<PairingResult> server = CompletableFuture.supplyAsync(
                () -> fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks()));
        awaitWaiting(fx);
        return server;
    }

    /** An announcement to the fixture's listener, which is there: it is noted. */
    private static Announcement announce(ShmFixture fx) {
        Announcement a = fx.transport.announce(address(fx), fx.clientOptions());
        assertNotNull(a, "a listener is there: the announcement is noted");
        return a;
    }

    /** Until an accepting thread waits on the binding (a condition, not a sleep). */
    private static void awaitWaiting(ShmFixture fx) throws InterruptedException {
        ShmServerBinding b = (ShmServerBinding) fx.binding;
        boolean waiting = false; // seen once (see awaitingAccept)
        for (int i = 0; i < 10_000 && !(waiting = b.waitingAccepts() == 1); i++) {
            Thread.sleep(1);
        }
        assertTrue(waiting, "an accepting thread should be waiting for the announced client");
    }

    /** A port nobody listens on (bound then released). */
    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
