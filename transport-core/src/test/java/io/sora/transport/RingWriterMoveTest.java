package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * When a writer waiting on a full ring moves its bytes to TCP (docs/shm.md, "Buffering"), against a scripted
 * medium whose peer never reads and whose writer always waits: the move needs this end's reads to have stood
 * still as long, as in a program that writes all before it reads. A read under way here drains the peer's
 * ring, so both ends are only slow: the RDMA VM's full-duplex stream, its reader threads descheduled for
 * 10 ms, moved to TCP for good before (a clean clone's RdmaPeerKillTest, 2026-11-29).
 */
class RingWriterMoveTest {
    /** 16-byte rings: this end's send ring never drained, its receive ring empty until {@link ScriptedMedium#deliver}. */
    static final class StuckPeer extends ScriptedMedium {
        final AtomicInteger timedWaits = new AtomicInteger();
        volatile long switchedAt = -1;

        @Override public boolean carriesTcpSwitch() { return true; }
        @Override public boolean peerFollowsTcp() { return true; }
        @Override public boolean peerWriterWaiting() { return true; }

        @Override
        public boolean awaitWriter(long timeoutNanos) {
            if (timeoutNanos > 0) timedWaits.incrementAndGet();
            return false; // the stream parks for the slice
        }

        @Override
        public boolean switchToTcp(long at) {
            switchedAt = at;
            return true;
        }
    }

    @Test
    void aWriterStaysOnTheRingWhileThisEndsReadIsUnderWayAndMovesOnceReadsStandStill() throws Exception {
        StuckPeer m = new StuckPeer();
        RingConnection c = new RingConnection(RingConnection.nextId(), "test", m, new TestHooks(), 0);
        ByteArrayOutputStream tcp = new ByteArrayOutputStream();
        c.outputStream().tcpFallback(tcp);
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
            try {
                return c.inputStream().read(new byte[8]);
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }, TestThreads.OWN);
        awaitReading(c);
        byte[] data = new byte[40];
        for (int i = 0; i < data.length; i++) data[i] = (byte) i;
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
            try {
                c.outputStream().write(data);
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }, TestThreads.OWN);
        // five looks, each a slice (the switch time) after the last: four slices past the switch time, the read
        // still under way, and no move
        for (int i = 0; i < 60_000 && m.timedWaits.get() < 5 && !write.isDone(); i++) Thread.sleep(1);
        assertTrue(m.timedWaits.get() >= 5, "the writer did not look again: " + m.timedWaits.get() + " timed waits");
        assertFalse(write.isDone(), "the writer moved (or failed) while this end's read was under way");
        assertEquals(-1, m.switchedAt);
        m.deliver(1);
        assertEquals(1, read.get(30, TimeUnit.SECONDS), "the read");
        // reads stand still now: the writer moves, its bytes past the ring's 16 to TCP
        write.get(30, TimeUnit.SECONDS);
        assertEquals(16, m.switchedAt, "moved at");
        assertTrue(c.outputStream().onTcp());
        byte[] rest = new byte[24];
        System.arraycopy(data, 16, rest, 0, 24);
        assertArrayEquals(rest, tcp.toByteArray(), "the bytes after the ring's, by TCP");
    }

    @Test
    void aWriterWhoseEndNeverReadMovesWithoutWaitingLonger() throws Exception {
        StuckPeer m = new StuckPeer();
        RingConnection c = new RingConnection(RingConnection.nextId(), "test", m, new TestHooks(), 0);
        ByteArrayOutputStream tcp = new ByteArrayOutputStream();
        c.outputStream().tcpFallback(tcp);
        c.outputStream().write(new byte[20]);
        assertEquals(16, m.switchedAt, "moved at");
        assertEquals(4, tcp.size());
        // looked once the switch time had passed: at most two slices slept (the first and the one that ended past it)
        assertTrue(m.timedWaits.get() <= 2, m.timedWaits.get() + " timed waits");
    }

    /** Until this end's reader sleeps in its read (it holds the read lock): bounded. */
    private static void awaitReading(RingConnection c) throws InterruptedException {
        for (int i = 0; i < 30_000 && c.inputStream().readProgress() != -1; i++) Thread.sleep(1);
        assertEquals(-1, c.inputStream().readProgress(), "the reader is not in its read");
    }
}
