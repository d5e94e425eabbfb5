package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sora.trace.Tracer;
import io.sora.transport.RingConnection;
import io.sora.transport.RingMedium;
import io.sora.transport.SocketHooks;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The RDMA medium and queue pair logic over two {@link FakeVerbs} connected back to back: each test
 * pins one defect of issue 12 ("RDMA defects"). No sleeps: every wait is on a condition, bounded by
 * {@link #BOUND_NANOS} only so that a regression fails instead of hanging.
 */
class RdmaMediumTest {
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final int RING = 4096;

    static final SocketHooks HOOKS = new SocketHooks() {
        @Override
        public int soTimeoutMillis() {
            return 0;
        }

        @Override
        public void closeSocket() {
        }
    };

    /** Two paired media over two fakes; a writes into b's ring and b into a's. */
    static final class Link {
        final FakeVerbs va;
        final FakeVerbs vb;
        final RdmaMedium a;
        final RdmaMedium b;
        final RingConnection ca;
        final RingConnection cb;

        Link() throws IOException {
            this(RdmaMedium.DIRECT_SLICE_MILLIS);
        }

        /** @param directSliceMillis as {@link RdmaMedium}'s: 0, every sleep through the completion thread */
        Link(int directSliceMillis) throws IOException {
            FakeVerbs[] v = FakeVerbs.pair();
            va = v[0];
            vb = v[1];
            a = new RdmaMedium(1, new QueuePair(va, 1, Tracer.OFF), Tracer.OFF, directSliceMillis);
            b = new RdmaMedium(2, new QueuePair(vb, 2, Tracer.OFF), Tracer.OFF, directSliceMillis);
            Verbs.Region ra = a.allocateReceiveRing(RING);
            Verbs.Region rb = b.allocateReceiveRing(RING);
            a.allocateSendRing(RING, rb.address(), rb.rkey());
            b.allocateSendRing(RING, ra.address(), ra.rkey());
            a.paired();
            b.paired();
            ca = new RingConnection(1, "rdma", a, HOOKS, 0);
            cb = new RingConnection(2, "rdma", b, HOOKS, 0);
            settle(a, va);
            settle(b, vb);
        }

        void abort() {
            a.abort();
            b.abort();
        }
    }

    private Link link;

    @AfterEach
    void tearDown() {
        if (link != null) link.abort();
    }

    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + BOUND_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) fail("gave up waiting: " + what);
            Thread.yield();
        }
    }

    /** Waits until the medium's completion thread parks (nobody waiting, so nobody polls its CQ). */
    static void settle(RdmaMedium m, FakeVerbs v) {
        Thread t = m.completionThread();
        await("completion thread parks", () -> {
            v.kick();
            return t.getState() == Thread.State.WAITING && LockSupport.getBlocker(t) == m;
        });
    }

    private static byte[] readAll(InputStream in, int expected) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[512];
        while (got.size() < expected) {
            int n = in.read(buf);
            if (n < 0) break;
            got.write(buf, 0, n);
        }
        return got.toByteArray();
    }

    /** Starts a thread that reads one byte from {@code in} into {@code got} (or the IOException it threw). */
    private static Thread startReader(InputStream in, AtomicReference<Object> got, String name) {
        Thread reader = new Thread(() -> {
            try {
                got.set(in.read());
            } catch (IOException e) {
                got.set(e);
            }
        }, name);
        reader.start();
        return reader;
    }

    // ------------------------------------------------------------------ waiting policy

    /**
     * A reader that sleeps through the completion thread (direct waits off) is woken by it; the medium
     * tells the reader's waiting policy what that wake-up cost (two hand-offs), and only for a wake-up
     * it signalled.
     */
    @Test
    void aSleepingReaderLearnsWhatItsWakeUpCost() throws Exception {
        link = new Link(0); // spinIterations 0: every wait sleeps at once
        long before = System.nanoTime();
        assertEquals(-1, link.b.wakeLatencyNanos(true, before, System.nanoTime()), "no wake-up signalled yet");
        AtomicReference<Object> got = new AtomicReference<>();
        Thread reader = startReader(link.cb.inputStream(), got, "reader");
        await("reader sleeps", () -> reader.getState() == Thread.State.WAITING);
        link.ca.outputStream().write(42);
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertEquals(42, got.get());
        long now = System.nanoTime();
        long cost = link.b.wakeLatencyNanos(true, before, now);
        assertTrue(cost >= 0 && cost <= 2 * (now - before), "wake-up cost " + cost + " ns");
        assertEquals(-1, link.b.wakeLatencyNanos(true, now, System.nanoTime()), "a sleep after the wake-up was not woken");
        assertEquals(-1, link.b.wakeLatencyNanos(false, before, now), "the writer never slept");
    }

    /**
     * b's reader sleeps {@link RdmaMedium#MEASURED_WAKES_FIRST} times, each woken through the completion
     * thread (parked, not on the channel): what a hand-off costs is measured before any direct wait.
     */
    private static void measureWakes(Link link) throws Exception {
        for (int i = 0; i < RdmaMedium.MEASURED_WAKES_FIRST; i++) {
            AtomicReference<Object> got = new AtomicReference<>();
            Thread reader = startReader(link.cb.inputStream(), got, "reader-" + i);
            await("reader parks", () -> reader.getState() == Thread.State.WAITING && LockSupport.getBlocker(reader) != null);
            link.ca.outputStream().write(i);
            reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
            assertEquals(i, got.get());
        }
        assertEquals(0, link.b.waitCounts()[0], "the first sleeps went through the completion thread");
    }

    /**
     * Once a hand-off has been measured, a sleeping reader waits on the completion channel itself: the
     * peer's write wakes it in one hand-off, and the completion thread never waits on the channel (nor
     * is woken) for it.
     */
    @Test
    void aSleepingReaderWaitsOnTheCompletionChannelItself() throws Exception {
        link = new Link((int) TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS)); // a slice no test outlasts
        measureWakes(link);
        settle(link.b, link.vb);
        long threadWaitsBefore = link.b.waitCounts()[1];
        AtomicReference<Object> got = new AtomicReference<>();
        Thread reader = startReader(link.cb.inputStream(), got, "reader");
        await("reader waits on the completion channel", () -> link.b.waitCounts()[0] == 1
                && reader.getState() == Thread.State.TIMED_WAITING);
        link.ca.outputStream().write(42);
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertEquals(42, got.get());
        assertEquals(1, link.b.waitCounts()[0], "one direct wait");
        assertEquals(threadWaitsBefore, link.b.waitCounts()[1], "the completion thread did not wait on the channel");
        Thread t = link.b.completionThread();
        assertTrue(t.getState() == Thread.State.WAITING && LockSupport.getBlocker(t) == link.b, "completion thread still parked");
    }

    /**
     * The verbs resources are released only once no thread waits on the completion channel: a reader
     * waiting there when the connection is dropped (our disconnect after the peer died, a listener
     * closing) keeps the completion thread's release waiting until it leaves (a channel freed under a
     * thread in {@code ibv_get_cq_event} is a use after free); the reader then ends when its socket
     * is closed.
     */
    @Test
    void releaseWaitsForAReaderOnTheCompletionChannel() throws Exception {
        link = new Link((int) TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        measureWakes(link);
        settle(link.b, link.vb);
        link.vb.holdEvents();
        AtomicReference<Object> got = new AtomicReference<>();
        Thread reader = startReader(link.cb.inputStream(), got, "reader");
        await("reader held on the completion channel", () -> link.vb.holdsEventsOf(reader));
        link.b.abort();
        Thread t = link.b.completionThread();
        await("the completion thread releases, or waits to", () -> t.getState() == Thread.State.TERMINATED
                || (t.getState() == Thread.State.WAITING && LockSupport.getBlocker(t) instanceof AbstractQueuedSynchronizer));
        assertFalse(link.vb.isDestroyed(), "not released while the reader waits on the channel");
        link.vb.releaseEvents();
        t.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertTrue(link.vb.isDestroyed(), "released once the reader left the channel");
        assertFalse(link.vb.destroyedUnderWaiter(), "never released under a waiting thread");
        link.cb.close();
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertFalse(reader.isAlive(), "the reader ended when its socket closed: " + got.get());
    }

    // ------------------------------------------------------------------ 1: post after release

    /**
     * A write that passed its checks while the connection was being closed reaches the queue pair
     * after the completion thread released the verbs: it must end in an IOException (or return), never
     * in the NullPointerException of a freed work request.
     */
    @Test
    void writeRacingReleaseNeverThrowsNullPointerException() throws Exception {
        link = new Link();
        link.a.abort(); // close ran to its end: the completion thread destroys the queue pair
        await("queue pair destroyed", link.a.qp::isDestroyed);
        OutputStream out = link.ca.outputStream(); // the stream itself was not closed yet: the race
        try {
            out.write(new byte[] {1, 2, 3});
        } catch (IOException expected) {
            // "Socket closed"-like: fine
        } catch (RuntimeException e) {
            throw new AssertionError("a write racing a close must not throw " + e, e);
        }
        try {
            link.a.qp.postData(0, 1);
            fail("a post after destroy must fail");
        } catch (IOException expected) {
            assertTrue(expected.getMessage().contains("released"), expected.getMessage());
        }
    }

    // ------------------------------------------------------------------ 3: EOF only after the CQ is empty

    /**
     * The peer wrote 40 bytes in 40 writes (40 completions queued) and then died. Another thread holds
     * the poll lock at the moment the reader looks: the reader must not report EOF before it has
     * drained every data completion.
     */
    @Test
    void eofAfterPeerDeathComesOnlyAfterEveryQueuedByte() throws Exception {
        link = new Link();
        byte[] sent = new byte[40];
        OutputStream out = link.ca.outputStream();
        for (int i = 0; i < sent.length; i++) {
            sent[i] = (byte) (i + 1);
            out.write(sent[i]);
        }
        await("40 data completions queued at b", () -> link.vb.queuedCompletions() >= 40);

        Thread holder = new Thread(() -> link.b.qp.poll(true), "poll-lock-holder");
        CountDownLatch entered = link.vb.gatePolls(holder);
        holder.start();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "holder inside poll");
        link.b.onFailure(QueuePair.STATUS_FLUSH, 0, true); // the peer is gone: DEAD
        assertTrue((link.b.peerFlags() & RingMedium.DEAD) != 0);

        AtomicReference<Object> result = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                result.set(readAll(link.cb.inputStream(), Integer.MAX_VALUE));
            } catch (Throwable t) {
                result.set(t);
            }
        }, "reader");
        reader.start();
        await("reader finished or blocked on the poll lock", () -> result.get() != null
                || (reader.getState() == Thread.State.WAITING && LockSupport.getBlocker(reader) instanceof AbstractQueuedSynchronizer));
        link.vb.openGate();
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        holder.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertFalse(reader.isAlive(), "reader ended");
        if (result.get() instanceof Throwable t) throw new AssertionError("reader failed", t);
        assertArrayEquals(sent, (byte[]) result.get(), "every byte written before the peer died, then EOF");
    }

    // ------------------------------------------------------------------ a faulty peer's counts

    /** A CTRL from the peer (as its queue pair would deliver it) with the given counts. */
    private static void ctrlFromPeer(RdmaMedium m, long consumed, long reposted) {
        ByteBuffer ctrl = ByteBuffer.allocate(RdmaWire.CTRL_SIZE);
        RdmaWire.encodeCtrl(ctrl, 0, consumed, 0, reposted);
        m.onMessage(ctrl, 0, RdmaWire.CTRL_SIZE);
    }

    /** The writer's next write fails with the break's IOException, naming why (never a hang, never lost bytes). */
    private static void assertBroken(Link link, String why) {
        assertTrue((link.a.peerFlags() & RingMedium.DEAD) != 0, "the connection broke");
        IOException e = assertThrows(IOException.class, () -> {
            link.ca.outputStream().write(new byte[RING]);
            link.ca.outputStream().write(new byte[RING]);
        });
        assertTrue(String.valueOf(link.a.failure()).contains(why), "failure " + link.a.failure() + ", exception " + e);
    }

    /**
     * A peer that reports having read more than was ever sent to it would let the writer take ring
     * space still holding bytes not yet sent (overwritten, never delivered): the connection breaks instead.
     */
    @Test
    void aPeerReportingMoreConsumedThanSentBreaksTheConnection() throws Exception {
        link = new Link();
        link.ca.outputStream().write(new byte[100]);
        ctrlFromPeer(link.a, 100 + RING, 0);
        assertBroken(link, "consumed");
    }

    /** Likewise receive credits for more messages than were sent: the writer would overrun the peer's receives. */
    @Test
    void aPeerReturningMoreReceivesThanItGotBreaksTheConnection() throws Exception {
        link = new Link();
        ctrlFromPeer(link.a, 0, link.a.qp.posted() + 1_000);
        assertBroken(link, "receives");
    }

    /** A peer whose writes overran this side's ring (more unread bytes than it holds) breaks the connection before they are read. */
    @Test
    void aPeerWritingPastTheFreeRingBreaksTheConnection() throws Exception {
        link = new Link();
        link.a.onData(RING + 1);
        assertBroken(link, "ring");
        int r;
        try {
            r = link.ca.inputStream().read();
        } catch (IOException e) {
            r = -1;
        }
        assertEquals(-1, r, "none of the overrun bytes is read: the end (as after a peer's death), or an IOException");
    }

    /**
     * A send queue that stays full while every poll of the CQ fails: the post that waits for room ends
     * with an IOException instead of polling for good.
     */
    @Test
    void aPostWaitingForSendRoomEndsWhenPollsFail() throws Exception {
        link = new Link();
        link.va.failPolls(true);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread poster = new Thread(() -> {
            try {
                for (int i = 0; i < 2 * QueuePair.SQ_DEPTH; i++) link.a.qp.postCtrl(0, 0, 0, false);
                outcome.set("every post went");
            } catch (Throwable t) {
                outcome.set(t);
            }
        }, "poster");
        poster.setDaemon(true);
        poster.start();
        poster.join(TimeUnit.SECONDS.toMillis(10));
        boolean ended = !poster.isAlive();
        if (!ended) { // a post spinning on the failing poll: let it go, and end
            link.va.failPolls(false);
            poster.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertTrue(ended, "the post waiting for room ended");
        assertTrue(outcome.get() instanceof IOException, "outcome " + outcome.get());
    }

    // ------------------------------------------------------------------ 4: receive slots are credits

    /**
     * 300 one-byte writes while the reader is idle (nobody polls b's CQ, so b reposts no receive):
     * the writer must not post more messages than b has receives posted (on hardware the excess is
     * retried forever under rnr_retry 7, holding up the send queue and every credit message behind
     * it). The bytes still all arrive once b reads, in order.
     */
    @Test
    void smallWritesNeverExceedThePeersPostedReceives() throws Exception {
        link = new Link();
        byte[] sent = new byte[300];
        OutputStream out = link.ca.outputStream();
        for (int i = 0; i < sent.length; i++) {
            sent[i] = (byte) (i * 7 + 1);
            out.write(sent[i]);
        }
        assertEquals(0, link.vb.rnrCount(), "messages that found no posted receive at the peer");
        assertArrayEquals(sent, readAll(link.cb.inputStream(), sent.length));
        assertEquals(0, link.vb.rnrCount(), "messages that found no posted receive at the peer");
        assertEquals(0, link.va.rnrCount(), "credit messages that found no posted receive");
    }

    /**
     * A close while bytes wait for the peer's slot credits (more small writes than it has receives posted,
     * its application not reading yet, so its completion thread polls nothing and returns no credits):
     * the close returns at once, as TCP's, and the bytes and the end still reach the peer once it reads,
     * however long after; with SO_LINGER 0 the reset comes after them. Before, the close waited 1 s,
     * then disconnected: the peer read the first 112 writes and then the end, the rest lost unseen
     * (found in review, 2026-11-29).
     */
    @Test
    void aCloseWithBytesHeldForCreditsDeliversThemAllThenTheEnd() throws Exception {
        for (boolean reset : new boolean[] {false, true}) {
            // the events name this round's link, not the field: the last round's disconnect event runs on a
            // thread of its own and could come after the next round's link was made. Found looking at a
            // failure seen once ("Connection reset by peer" in the middle of the writes, a clean clone's run,
            // 2026-11-30); not reproduced (12 runs beside two busy loops, events delayed 1-8 ms), so not
            // proven to be its cause
            Link l = new Link();
            link = l;
            l.vb.onPeerDisconnect(() -> l.b.onCmGone("peer disconnected"));
            l.va.onPeerDisconnect(() -> l.a.onCmGone("peer disconnected"));
            byte[] sent = new byte[300];
            OutputStream out = link.ca.outputStream();
            for (int i = 0; i < sent.length; i++) {
                sent[i] = (byte) (i * 5 + 3);
                out.write(sent[i]);
            }
            if (reset) link.ca.resetOnClose();
            long t0 = System.nanoTime();
            link.ca.close();
            long closeMillis = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(closeMillis < 500, "close waited " + closeMillis + " ms for the peer's credits");
            settle(link.b, link.vb); // the peer's application comes later
            InputStream in = link.cb.inputStream();
            assertArrayEquals(sent, readAll(in, sent.length));
            if (reset) {
                assertEquals("Connection reset", assertThrows(java.net.SocketException.class, in::read).getMessage());
            } else {
                assertEquals(-1, in.read());
            }
            link.abort();
        }
    }

    /**
     * A selector's disarm must not erase the mark of a reader sleeping on the stream (a blocking read
     * begun on a channel whose cancelled key's select was still waiting, bug 30's sequence): the completion
     * thread would park and the peer's bytes never wake the read (found in review, 2026-11-29).
     */
    @Test
    void aSelectorsDisarmLeavesASleepingReaderWoken() throws Exception {
        link = new Link(0);
        link.b.armReaderWaker(true);
        AtomicReference<Object> got = new AtomicReference<>();
        Thread reader = startReader(link.cb.inputStream(), got, "sleeping-reader");
        await("reader sleeps", () -> reader.getState() == Thread.State.WAITING || reader.getState() == Thread.State.TIMED_WAITING);
        link.b.armReaderWaker(false);
        // the completion thread's wait ends (kicked): it waits again for the sleeping reader, or parks
        long waits = link.b.waitCounts()[1];
        Thread t = link.b.completionThread();
        await("the completion thread waits again, or parks", () -> {
            link.vb.kick();
            return link.b.waitCounts()[1] > waits || (t.getState() == Thread.State.WAITING && LockSupport.getBlocker(t) == link.b);
        });
        link.ca.outputStream().write(42);
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertEquals(42, got.get(), "the read woken by the peer's byte");
    }

    /**
     * A connection dropped under its streams (a listener's close aborting a pairing its accept had just
     * claimed) ends them, as the peer's death would: a read gets the end, not a wait for ever (found in
     * review, 2026-11-29).
     */
    @Test
    void anAbortedMediumEndsItsStreams() throws Exception {
        link = new Link();
        AtomicReference<Object> got = new AtomicReference<>();
        Thread reader = startReader(link.cb.inputStream(), got, "reader-of-aborted");
        await("reader sleeps", () -> reader.getState() == Thread.State.WAITING || reader.getState() == Thread.State.TIMED_WAITING);
        link.b.abort();
        reader.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS));
        assertEquals(-1, got.get(), "the read of an aborted connection");
        assertThrows(IOException.class, () -> link.cb.outputStream().write(1));
    }

    /**
     * Both directions at once with small writes and readers that keep up: nothing is lost, nothing
     * stalls, and no message ever finds the peer without a posted receive.
     */
    @Test
    void smallWritesBothWaysKeepWithinTheSlots() throws Exception {
        link = new Link();
        int n = 2000;
        byte[] ab = new byte[n];
        byte[] ba = new byte[n];
        for (int i = 0; i < n; i++) {
            ab[i] = (byte) i;
            ba[i] = (byte) (i * 3);
        }
        AtomicReference<Object> readA = new AtomicReference<>();
        AtomicReference<Object> readB = new AtomicReference<>();
        Thread ra = new Thread(() -> {
            try {
                readA.set(readAll(link.ca.inputStream(), n));
            } catch (Throwable t) {
                readA.set(t);
            }
        });
        Thread rb = new Thread(() -> {
            try {
                readB.set(readAll(link.cb.inputStream(), n));
            } catch (Throwable t) {
                readB.set(t);
            }
        });
        Thread wb = new Thread(() -> {
            try {
                for (int i = 0; i < n; i++) link.cb.outputStream().write(ba[i]);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        ra.start();
        rb.start();
        wb.start();
        for (int i = 0; i < n; i++) link.ca.outputStream().write(ab[i]);
        long ms = TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS);
        wb.join(ms);
        ra.join(ms);
        rb.join(ms);
        assertFalse(ra.isAlive() || rb.isAlive() || wb.isAlive(), "every thread ended");
        assertArrayEquals(ab, (byte[]) readB.get());
        assertArrayEquals(ba, (byte[]) readA.get());
        assertEquals(0, link.va.rnrCount());
        assertEquals(0, link.vb.rnrCount());
    }
}
