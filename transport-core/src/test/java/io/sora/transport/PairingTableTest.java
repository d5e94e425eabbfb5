package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pairing engine on an in-memory medium: the order of an abort, what a closed table does with a
 * request, a failing offer, check or policy, and an accept that waits for a request where clients do
 * not announce themselves. The media's own suites (AbstractPairingTest) run the protocol end to end.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PairingTableTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final ConnectionKey KEY = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40000),
            new InetSocketAddress("127.0.0.1", 5000));
    private static final AcceptPolicy ALLOW = key -> new AcceptPolicy.Allow(new PairingOptions(64, 64, WAIT));

    /** One client's request on the fake medium: what the medium did with it. */
    static final class Link {
        volatile Pairing<Link> pairing;
        volatile String refusal;
        volatile int releases;
        /** At release: the key's entry and the pairing's state, as the medium saw them. */
        volatile PairingTable.Entry entryAtRelease;
        volatile Pairing.State stateAtRelease;
    }

    /** A medium whose offer succeeds unless told otherwise; the test plays the client's COMMIT. */
    static final class FakeMedium implements PairingMedium<Link> {
        PairingTable<Link> table;
        volatile String checkRefusal;
        volatile RuntimeException checkThrows;
        volatile IOException offerThrows;
        /** What the medium's catch-up reads (an announcement still unread in its socket), or null. */
        volatile Runnable catchUp;
        /** False: the catch-up cannot read everything (a listener that cannot accept right now). */
        volatile boolean catchUpComplete = true;
        /** Each link's settlement, when the medium has them (a proof of the TCP connection, as RDMA's). */
        final java.util.Map<Link, CountingSettlement> settlements = new java.util.concurrent.ConcurrentHashMap<>();

        /** How long a committed pairing waits for its accept (negative: for good, the default). */
        volatile long unclaimedTtl = -1;

        @Override
        public Settlement settlement(Link link) {
            return settlements.get(link);
        }

        @Override
        public long unclaimedTtlNanos() {
            return unclaimedTtl;
        }

        @Override
        public boolean catchUp() {
            Runnable r = catchUp;
            if (r != null) r.run();
            return catchUpComplete;
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public String check(Link link, ConnectionKey key) {
            if (checkThrows != null) throw checkThrows;
            return checkRefusal;
        }

        @Override
        public void offer(Pairing<Link> pairing, PairingOptions options) throws IOException {
            pairing.link().pairing = pairing;
            if (offerThrows != null) throw offerThrows;
            pairing.offered();
        }

        @Override
        public void refuse(Link link, String reason) {
            link.refusal = reason;
        }

        @Override
        public void release(Link link) {
            link.entryAtRelease = table.entry(KEY);
            link.stateAtRelease = link.pairing == null ? null : link.pairing.state();
            link.releases++;
        }

        @Override
        public FastConnection connection(Pairing<Link> pairing, SocketHooks hooks) {
            return new RingConnection(1, "fake", HeapRingMedium.pair(64, 64)[1], hooks, 0);
        }
    }

    /** A settlement that counts its runs and marks the results it settled. */
    static final class CountingSettlement implements Settlement {
        final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public PairingResult settle(PairingResult result, SocketHooks hooks, Duration wait) {
            runs.incrementAndGet();
            return result instanceof PairingResult.Fallback f ? new PairingResult.Fallback(f.reason() + "; settled") : result;
        }
    }

    private static FakeMedium medium(AcceptPolicy policy, boolean clientsAnnounce) {
        FakeMedium m = new FakeMedium();
        m.table = new PairingTable<>(m, policy, clientsAnnounce);
        return m;
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) fail("gave up waiting: " + what);
            Thread.yield();
        }
    }

    private static String fallback(PairingResult r) {
        return assertInstanceOf(PairingResult.Fallback.class, r).reason();
    }

    @Test
    void anAbortReleasesTheLinkThenMarksTheKeyThenEndsThePairing() {
        FakeMedium m = medium(ALLOW, true);
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertEquals(Pairing.State.OFFERED, link.pairing.state());
        link.pairing.abort("client closed the rendezvous before COMMIT");
        assertEquals(1, link.releases);
        assertEquals(PairingTable.Entry.PAIRING, link.entryAtRelease, "released before the key is marked");
        assertEquals(Pairing.State.OFFERED, link.stateAtRelease, "released before the state changes");
        assertEquals(PairingTable.Entry.TCP, m.table.entry(KEY));
        assertEquals("client closed the rendezvous before COMMIT", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
        link.pairing.abort("again");
        assertEquals(1, link.releases, "an abort happens once");
    }

    /**
     * A pairing's settlement (RDMA's look for the proof on the TCP connection) is run by exactly one accept:
     * the one that met the pairing's abort through its mark, never again by a later accept of the key (a
     * connection reusing the four-tuple, whose TCP stream has nothing of that pairing); and by the accept that
     * claimed a committed pairing.
     */
    @Test
    void aPairingsSettlementIsRunByOneAcceptOnly() {
        FakeMedium m = medium(ALLOW, true);
        Link aborted = new Link();
        CountingSettlement s = new CountingSettlement();
        m.settlements.put(aborted, s);
        m.table.request(aborted, KEY, null);
        aborted.pairing.abort("client left after the OFFER");
        assertEquals("client left after the OFFER; settled", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
        assertEquals("client left after the OFFER", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())),
                "a later accept of the key does not settle the pairing again");
        assertEquals(1, s.runs.get());

        FakeMedium m2 = medium(ALLOW, true);
        Link committed = new Link();
        CountingSettlement c = new CountingSettlement();
        m2.settlements.put(committed, c);
        m2.table.request(committed, KEY, null);
        assertTrue(committed.pairing.committed());
        assertInstanceOf(PairingResult.Paired.class, m2.table.awaitPairing(KEY, WAIT, new TestHooks()));
        assertEquals(1, c.runs.get(), "the claiming accept settles its pairing");
    }

    @Test
    void aCommittedPairingIsClaimedOnceAndNeverAborted() {
        FakeMedium m = medium(ALLOW, true);
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertTrue(link.pairing.committed());
        link.pairing.abort("too late");
        assertEquals(0, link.releases);
        assertInstanceOf(PairingResult.Paired.class, m.table.awaitPairing(KEY, WAIT, new TestHooks()));
        assertEquals(0, m.table.size(), "claimed: nothing left in the table");
    }

    @Test
    void aCommitAfterAnAbortDoesNotCommit() {
        FakeMedium m = medium(ALLOW, true);
        Link link = new Link();
        m.table.request(link, KEY, null);
        link.pairing.abort("accepting thread interrupted");
        assertFalse(link.pairing.committed());
        assertFalse(link.pairing.offered());
        assertEquals(Pairing.State.ABORTED, link.pairing.state());
    }

    @Test
    void anOfferThatFailsIsRefusedWithItsReasonAndAborted() {
        FakeMedium m = medium(ALLOW, true);
        m.offerThrows = new IOException("could not offer a thing: no space");
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertEquals("could not offer a thing: no space", link.refusal);
        assertEquals(1, link.releases);
        assertEquals("could not offer a thing: no space", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
    }

    @Test
    void aFailingCheckOrPolicyRefusesWithTheReason() {
        FakeMedium m = medium(ALLOW, true);
        m.checkThrows = new IllegalStateException("no peer credentials");
        Link a = new Link();
        m.table.request(a, KEY, null);
        assertEquals("pairing check failed: no peer credentials", a.refusal);
        assertEquals(PairingTable.Entry.NONE, m.table.entry(KEY), "a check refuses the request, not the key");

        FakeMedium p = medium(key -> {
            throw new IllegalStateException("rules gone");
        }, true);
        Link b = new Link();
        p.table.request(b, KEY, null);
        assertEquals("accept policy failed for " + KEY + ": java.lang.IllegalStateException: rules gone", b.refusal);
    }

    @Test
    void aRequestThatArrivesAsTheTableClosesIsAbortedAndReleased() {
        FakeMedium m = medium(ALLOW, true);
        m.table.close();
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertEquals(1, link.releases, "aborted before any offer");
        assertNull(link.pairing, "never offered");
        assertEquals("fake listener closed", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
    }

    @Test
    void closingReleasesCommittedPairingsNobodyClaimedAndAbortsTheRest() {
        FakeMedium m = medium(ALLOW, true);
        Link committed = new Link();
        m.table.request(committed, KEY, null);
        assertTrue(committed.pairing.committed());
        Link offered = new Link();
        ConnectionKey other = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40001), KEY.server());
        m.table.request(offered, other, null);
        m.table.close();
        assertEquals(1, committed.releases, "its client sees the control channel drop");
        assertEquals(Pairing.State.ABORTED, committed.pairing.state(), "released, never to be claimed");
        assertEquals("fake listener closed", committed.pairing.reason());
        assertEquals(1, offered.releases);
        assertEquals("fake listener closed", offered.pairing.reason());
        assertEquals(0, m.table.size());
    }

    /** Without announcements (RDMA), accept waits for the request until the pairing wait. */
    @Test
    void withoutAnnouncementsAcceptWaitsForTheRequest() throws Exception {
        FakeMedium m = medium(ALLOW, false);
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(() -> m.table.awaitPairing(KEY, WAIT, new TestHooks()), TestThreads.OWN);
        await("accept waits for the request", () -> m.table.waitingAccepts() == 1);
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertTrue(link.pairing.committed());
        assertInstanceOf(PairingResult.Paired.class, accept.get(30, TimeUnit.SECONDS)).connection().close();
    }

    /** With announcements (shm), accept waits only while a client announced before it may still send its request. */
    @Test
    void withAnnouncementsAcceptWaitsOnlyForAnnouncedClients() throws Exception {
        FakeMedium m = medium(ALLOW, true);
        assertEquals("client announced no pairing (no sora, or no fake rule for this server)",
                fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
        Object channel = new Object();
        m.table.announced(channel);
        ConnectionKey next = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40002), KEY.server());
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(() -> m.table.awaitPairing(next, WAIT, new TestHooks()), TestThreads.OWN);
        await("accept waits for the announced client", () -> m.table.waitingAccepts() == 1);
        Link link = new Link();
        m.table.request(link, next, channel);
        assertTrue(link.pairing.committed());
        assertInstanceOf(PairingResult.Paired.class, accept.get(30, TimeUnit.SECONDS)).connection().close();
        assertEquals(0, m.table.waitingAccepts());
    }

    /**
     * An announcement older than its age limit (a client whose connect waits in SYN retries after a full
     * backlog) no longer makes other accepts wait: they waited their whole pairing wait for as long as such
     * a connect lasted. The table's clock is moved past the limit.
     */
    @Test
    void anAnnouncementPastItsAgeMakesNoAcceptWait() throws Exception {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        FakeMedium m = new FakeMedium();
        m.table = new PairingTable<>(m, ALLOW, true, now::get);
        m.table.announced(new Object()); // a client stuck in its connect
        now.addAndGet(PairingTable.ANNOUNCE_TTL_NANOS);
        // a pairing wait far longer than the hang guard below: an accept that waits for that client fails it
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(
                () -> m.table.awaitPairing(KEY, Duration.ofSeconds(120), new TestHooks()), TestThreads.OWN);
        assertEquals("client announced no pairing (no sora, or no fake rule for this server)",
                fallback(accept.get(20, TimeUnit.SECONDS)));
        assertEquals(0, m.table.waitingAccepts());
    }

    /**
     * An announcement that passes its age limit while an accept waits for it ends the wait, and the accept
     * says why (a client too slow to send its request after announcing, maybe this very one), not that no
     * client announced anything. A medium's own limit counts (rdma gives its pairing-wait floor, seconds
     * under emulation): an announcement younger than it keeps the accept waiting.
     */
    @Test
    void anAnnouncementThatAgesWhileAnAcceptWaitsEndsTheWaitWithItsReason() throws Exception {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        FakeMedium m = new FakeMedium();
        long limit = 3 * PairingTable.ANNOUNCE_TTL_NANOS;
        m.table = new PairingTable<>(m, ALLOW, true, now::get, limit);
        m.table.announced(new Object()); // a client that announced and then stalled
        now.addAndGet(2 * PairingTable.ANNOUNCE_TTL_NANOS); // past the default limit, not past this table's
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(
                () -> m.table.awaitPairing(KEY, Duration.ofSeconds(120), new TestHooks()), TestThreads.OWN);
        await("accept waits for the announced client", () -> m.table.waitingAccepts() == 1);
        now.addAndGet(limit);
        assertEquals("no pairing request within 3000 ms of a client's announcement (the longest an announcement makes"
                + " accepts wait; a starved client JVM?)", fallback(accept.get(20, TimeUnit.SECONDS)));
    }

    /**
     * An announcement already past its age when an accept starts is not why that accept ends: a plain
     * client's accept, which waited for another client's fresh announcement until it was withdrawn, says
     * that no client announced anything (review, 2026-11-29: it blamed the stale one).
     */
    @Test
    void anAnnouncementStaleBeforeTheAcceptIsNotItsReason() throws Exception {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        FakeMedium m = new FakeMedium();
        m.table = new PairingTable<>(m, ALLOW, true, now::get);
        m.table.announced(new Object()); // a peer that connected and never asked
        now.addAndGet(2 * PairingTable.ANNOUNCE_TTL_NANOS);
        Object other = new Object();
        m.table.announced(other); // another client, mid-connect
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(
                () -> m.table.awaitPairing(KEY, Duration.ofSeconds(120), new TestHooks()), TestThreads.OWN);
        await("accept waits for the fresh announcement", () -> m.table.waitingAccepts() == 1);
        m.table.withdrawn(other);
        assertEquals("client announced no pairing (no sora, or no fake rule for this server)", fallback(accept.get(20, TimeUnit.SECONDS)));
    }

    @Test
    void thePolicysRefusalMarksTheKeyAndWakesAWaitingAccept() throws Exception {
        FakeMedium m = medium(key -> new AcceptPolicy.Refuse("not in the list"), false);
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(() -> m.table.awaitPairing(KEY, WAIT, new TestHooks()), TestThreads.OWN);
        await("accept waits for the request", () -> m.table.waitingAccepts() == 1);
        Link link = new Link();
        m.table.request(link, KEY, null);
        assertEquals("not in the list", link.refusal);
        assertNull(link.pairing);
        assertEquals("not in the list", fallback(accept.get(30, TimeUnit.SECONDS)));
    }

    /**
     * Loopback reuses a closed connection's four-tuple at once, so a key may still carry the TCP mark
     * an earlier connection's accept left. The accept of the new connection must still catch up with
     * the announcements and wait for the announced clients: it took the old mark for its own decision,
     * returned TCP without reading this client's announcement, and the client's request (announced,
     * as it then looked, after that accept) was paired: the client wrote into shared memory while the
     * server read TCP (a client of AcceptNeverWaitsIT hung until the server exited).
     */
    @Test
    void anEarlierConnectionsTcpMarkDoesNotDecideTheNextConnectionOnTheSameFourTuple() {
        FakeMedium m = medium(ALLOW, true);
        assertTrue(fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())).startsWith("client announced no pairing"),
                "the first connection: a client without sora");
        assertEquals(PairingTable.Entry.TCP, m.table.entry(KEY));
        Object channel = new Object();
        java.util.concurrent.atomic.AtomicBoolean read = new java.util.concurrent.atomic.AtomicBoolean();
        // the second client's announcement, written before its TCP connect, read by whoever comes first
        Runnable readAnnouncement = () -> {
            if (read.compareAndSet(false, true)) m.table.announced(channel);
        };
        m.catchUp = readAnnouncement;
        CompletableFuture<PairingResult> accept = CompletableFuture.supplyAsync(
                () -> m.table.awaitPairing(KEY, WAIT, new TestHooks()), TestThreads.OWN);
        await("the accept read the announcement or decided", () -> read.get() || accept.isDone());
        readAnnouncement.run(); // the listener's thread, if the accept did not catch up
        Link link = new Link();
        m.table.request(link, KEY, channel);
        if (link.pairing != null) link.pairing.committed();
        PairingResult r = accept.join();
        assertNull(link.refusal, "the announced client's request is this connection's");
        assertInstanceOf(PairingResult.Paired.class, r, "both ends on the fast path, not the client alone");
    }

    /**
     * An accept whose catch-up could not read every announcement (the listener cannot accept right now:
     * out of file descriptors) cannot know whether its own client announced: it decides TCP with the
     * reason, and the request the listener reads later (whose announcement, read after the accept,
     * looked like a new connection's on the same four-tuple) is refused, not paired. Paired, the client
     * wrote into shared memory while the server read TCP: both hung (DescriptorLimitIT).
     */
    @Test
    void anAcceptWhoseCatchUpCouldNotReadEverythingIsTcpAndTheLateRequestIsRefused() {
        FakeMedium m = medium(ALLOW, true);
        m.catchUpComplete = false;
        String reason = fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks()));
        assertTrue(reason.startsWith("fake listener cannot read its rendezvous right now"), reason);
        // the listener accepts again: this connection's announcement and request, read only now
        m.catchUpComplete = true;
        Object channel = new Object();
        m.table.announced(channel);
        Link link = new Link();
        m.table.request(link, KEY, channel);
        assertNotNull(link.refusal, "the late request must be refused: the accept returned TCP");
        assertTrue(link.refusal.startsWith("server already accepted on TCP"), link.refusal);
        assertNull(link.pairing, "never offered");
    }

    /**
     * An accept interrupted while it waits for announced clients marks the key TCP dated when it gave
     * up, so the request of its own connection, whose announcement the accept's catch-up read after
     * the accept began, is refused. Dated at the accept's start, the mark was replaced by that request
     * as if it came from a new connection on the four-tuple: the client paired, the server was on TCP.
     */
    @Test
    void anInterruptedAcceptsOwnConnectionIsRefusedNotPaired() throws Exception {
        FakeMedium m = medium(ALLOW, true);
        Object channel = new Object();
        java.util.concurrent.atomic.AtomicBoolean read = new java.util.concurrent.atomic.AtomicBoolean();
        m.catchUp = () -> {
            if (read.compareAndSet(false, true)) m.table.announced(channel);
        };
        PairingResult[] result = new PairingResult[1];
        Thread accept = new Thread(() -> result[0] = m.table.awaitPairing(KEY, WAIT, new TestHooks()));
        accept.start();
        await("the accept waits for the announced client", () -> m.table.waitingAccepts() == 1);
        accept.interrupt();
        accept.join();
        assertEquals("interrupted while waiting for pairing", fallback(result[0]));
        Link link = new Link();
        m.table.request(link, KEY, channel);
        assertNull(link.pairing, "no pairing offered for a connection its server put on TCP");
        assertTrue(link.refusal != null && link.refusal.startsWith("server already accepted on TCP"), link.refusal);
    }

    /**
     * The client's COMMIT and an interrupt of the accept waiting for it, in the order that ends the
     * wait with an InterruptedException although the pairing is committed (the interrupt ends the
     * wait; the COMMIT comes before the thread holds the pairing's monitor again): the accept returns
     * the paired connection (the client is paired), keeping its interrupt status. It returned TCP.
     */
    @Test
    void aCommitThatBeatsTheInterruptOfTheAcceptPairsBothEnds() throws Exception {
        FakeMedium m = medium(ALLOW, true);
        Link link = new Link();
        m.table.request(link, KEY, null);
        Pairing<Link> pairing = link.pairing;
        assertEquals(Pairing.State.OFFERED, pairing.state());
        PairingResult[] result = new PairingResult[1];
        boolean[] interruptedAfter = new boolean[1];
        Thread accept = new Thread(() -> {
            result[0] = m.table.awaitPairing(KEY, WAIT, new TestHooks());
            interruptedAfter[0] = Thread.currentThread().isInterrupted();
        });
        accept.start();
        await("the accept waits for the COMMIT", () -> accept.getState() == Thread.State.TIMED_WAITING);
        synchronized (pairing) {
            accept.interrupt();
            // woken by the interrupt and out of the wait set, it waits for this monitor: the COMMIT's
            // notify finds it gone, and its wait ends with the InterruptedException
            await("the interrupted accept wants the pairing's monitor back", () -> accept.getState() == Thread.State.BLOCKED);
            assertTrue(pairing.committed(), "the COMMIT is taken");
        }
        accept.join();
        assertInstanceOf(PairingResult.Paired.class, result[0], "the client is paired: so is the server");
        assertTrue(interruptedAfter[0], "the interrupt status is kept");
        assertEquals(0, link.releases, "a committed pairing is not released");
        assertEquals(PairingTable.Entry.NONE, m.table.entry(KEY), "claimed");
    }

    /**
     * A mark with a reason (here: the policy refused an earlier connection on the same four-tuple)
     * that an accept reports is dated anew, so the sweep cannot drop it between that accept and a
     * late request of the same connection: dropped, the request found the key free and was paired
     * while its server was on TCP. The table's clock is moved to the mark's expiry.
     */
    @Test
    void aMarkAnAcceptReportedOutlivesItsOldDateSoALateRequestIsStillRefused() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        java.util.concurrent.atomic.AtomicBoolean refuse = new java.util.concurrent.atomic.AtomicBoolean(true);
        FakeMedium m = new FakeMedium();
        m.table = new PairingTable<>(m, key -> refuse.get() ? new AcceptPolicy.Refuse("not this client")
                : new AcceptPolicy.Allow(new PairingOptions(64, 64, WAIT)), true, now::get);
        Link earlier = new Link();
        m.table.request(earlier, KEY, null);
        assertEquals("not this client", earlier.refusal, "an earlier connection on the key, refused");
        refuse.set(false);
        now.addAndGet(PairingTable.TCP_MARK_TTL_NANOS - 1_000_000L); // just before that mark expires
        assertEquals("not this client", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())),
                "the next connection's accept reports the mark's reason: its server is on TCP");
        now.addAndGet(2_000_000_000L); // past the old mark's expiry, and past the sweep's interval
        Link late = new Link();
        m.table.request(late, KEY, null);
        assertNull(late.pairing, "no pairing for a connection its server put on TCP");
        assertTrue(late.refusal != null && late.refusal.startsWith("server already accepted on TCP"), late.refusal);
    }

    /**
     * The mark of an aborted pairing that still carries its settlement outlives an ordinary mark's age, so
     * an accept that comes late (a long backlog) still settles it, rather than hand the application what
     * the medium must settle first; it goes after {@link PairingTable#SETTLEMENT_MARK_TTL_NANOS}.
     */
    @Test
    void aMarkWithASettlementOutlivesAnOrdinaryMark() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        FakeMedium m = new FakeMedium();
        m.table = new PairingTable<>(m, ALLOW, true, now::get);
        Link aborted = new Link();
        CountingSettlement s = new CountingSettlement();
        m.settlements.put(aborted, s);
        m.table.request(aborted, KEY, null);
        aborted.pairing.abort("client left after the OFFER");
        now.addAndGet(PairingTable.TCP_MARK_TTL_NANOS + 2_000_000_000L);
        m.table.request(new Link(), new ConnectionKey(new InetSocketAddress("127.0.0.1", 40002), KEY.server()), null); // sweeps
        assertEquals(PairingTable.Entry.TCP, m.table.entry(KEY), "kept past the ordinary age");
        assertEquals("client left after the OFFER; settled", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));

        Link again = new Link();
        m.settlements.put(again, new CountingSettlement());
        ConnectionKey third = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40003), KEY.server());
        m.table.request(again, third, null);
        again.pairing.abort("client left after the OFFER");
        now.addAndGet(PairingTable.SETTLEMENT_MARK_TTL_NANOS + 2_000_000_000L);
        m.table.request(new Link(), new ConnectionKey(new InetSocketAddress("127.0.0.1", 40004), KEY.server()), null); // sweeps
        assertEquals(PairingTable.Entry.NONE, m.table.entry(third), "gone after the settlement's age");
    }

    /**
     * A committed pairing that no accept claims (an RDMA peer can commit one for a connection that was
     * accepted already) is released once it waited the medium's limit, rather than hold its resources until
     * the listener closes; an accept that comes later reports why, and runs its settlement (a proof may be on
     * the TCP stream). A medium without a limit (shm) keeps it for its accept, however late.
     */
    @Test
    void aCommittedPairingNoAcceptClaimsIsReleasedAfterTheMediumsLimit() {
        long ttl = PairingTable.TCP_MARK_TTL_NANOS;
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        FakeMedium m = new FakeMedium();
        m.unclaimedTtl = ttl;
        m.table = new PairingTable<>(m, ALLOW, true, now::get);
        Link unclaimed = new Link();
        CountingSettlement s = new CountingSettlement();
        m.settlements.put(unclaimed, s);
        m.table.request(unclaimed, KEY, null);
        assertTrue(unclaimed.pairing.committed());
        now.addAndGet(ttl - 1_000_000_000L);
        m.table.request(new Link(), new ConnectionKey(new InetSocketAddress("127.0.0.1", 40002), KEY.server()), null); // sweeps
        assertEquals(0, unclaimed.releases, "not yet: it may still be claimed");
        now.addAndGet(3_000_000_000L);
        m.table.request(new Link(), new ConnectionKey(new InetSocketAddress("127.0.0.1", 40003), KEY.server()), null); // sweeps
        assertEquals(1, unclaimed.releases, "released after the limit");
        String reason = fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks()));
        assertTrue(reason.startsWith("committed, but no accept claimed it within 60 s") && reason.endsWith("; settled"), reason);
        assertEquals(1, s.runs.get());

        FakeMedium shm = new FakeMedium(); // no limit
        shm.table = new PairingTable<>(shm, ALLOW, true, now::get);
        Link late = new Link();
        shm.table.request(late, KEY, null);
        assertTrue(late.pairing.committed());
        now.addAndGet(10 * ttl);
        shm.table.request(new Link(), new ConnectionKey(new InetSocketAddress("127.0.0.1", 40004), KEY.server()), null); // sweeps
        assertEquals(0, late.releases);
        assertInstanceOf(PairingResult.Paired.class, shm.table.awaitPairing(KEY, WAIT, new TestHooks()), "claimed however late");
    }

    /**
     * The listener's close keeps the marks that carry a settlement, for the accepts still to come (an accept
     * of a connection in the backlog after the listener failed, its server socket still open): the look for
     * an RDMA proof is not skipped. A committed pairing nobody claimed leaves one too.
     */
    @Test
    void theListenersCloseKeepsSettlementsForTheAcceptsToCome() {
        FakeMedium m = medium(ALLOW, true);
        Link offered = new Link();
        CountingSettlement so = new CountingSettlement();
        m.settlements.put(offered, so);
        m.table.request(offered, KEY, null);
        ConnectionKey other = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40001), KEY.server());
        Link committed = new Link();
        CountingSettlement sc = new CountingSettlement();
        m.settlements.put(committed, sc);
        m.table.request(committed, other, null);
        assertTrue(committed.pairing.committed());
        m.table.close("listener failed");
        assertEquals(1, committed.releases, "the committed pairing nobody claimed is released");
        assertEquals("listener failed; settled", fallback(m.table.awaitPairing(KEY, WAIT, new TestHooks())));
        assertEquals("listener failed; settled", fallback(m.table.awaitPairing(other, WAIT, new TestHooks())));
        assertEquals(1, so.runs.get());
        assertEquals(1, sc.runs.get());
    }

    @Test
    void aSecondRequestForAKeyIsRefused() {
        FakeMedium m = medium(ALLOW, true);
        Link first = new Link();
        m.table.request(first, KEY, null);
        Link second = new Link();
        m.table.request(second, KEY, null);
        assertEquals("duplicate pairing request for " + KEY, second.refusal);
        assertSame(Pairing.State.OFFERED, first.pairing.state());
    }
}
