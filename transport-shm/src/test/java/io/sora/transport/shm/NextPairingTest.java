package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.ConnectionKey;
import io.sora.transport.Futex;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The next connection on a kept segment, agreed in its memory: the key read back exactly, the
 * client's withdrawal and the server's pairing exclusive, each side's sleep ended by the other's move.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NextPairingTest {
    private static final java.lang.invoke.VarHandle INTS =
            java.lang.invoke.MethodHandles.byteBufferViewVarHandle(int[].class, java.nio.ByteOrder.nativeOrder());
    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteBufferViewVarHandle(long[].class, java.nio.ByteOrder.nativeOrder());

    @TempDir
    Path tmp;
    private Segment seg;
    private final ConnectionKey key;

    NextPairingTest() throws Exception {
        key = new ConnectionKey(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 40001),
                new InetSocketAddress(InetAddress.getByName("::1"), 8080));
    }

    @BeforeEach
    void segment() throws Exception {
        assertTrue(Futex.isAvailable(), "sora's native library");
        seg = Segment.create(tmp.resolve("seg"), 4096, 4096, ShmDirectory.randomBytes(Segment.SECRET_SIZE));
        // what an earlier connection left: cursors and a stale state the announcement must clear
        LONGS.setVolatile(seg.buffer, Segment.OFF_C2S_PRODUCED, 12345L);
        INTS.setVolatile(seg.buffer, Segment.OFF_NEXT, NextPairing.PAIRED);
    }

    @Test
    void theKeyWrittenAfterTheAnnouncementIsReadBackExactlyAndThePairingEndsTheClientsWait() throws Exception {
        NextPairing.announce(seg);
        assertEquals(0L, (long) LONGS.getVolatile(seg.buffer, Segment.OFF_C2S_PRODUCED), "connection fields reset");
        assertEquals(NextPairing.ANNOUNCED, NextPairing.state(seg));
        assertTrue(NextPairing.key(seg, key, 65536, true));
        assertEquals(NextPairing.KEYED, NextPairing.state(seg));
        Wire.Hello hello = NextPairing.hello(seg);
        assertEquals(key, hello.key());
        assertEquals(65536, hello.receiveRing());

        AtomicInteger kicks = new AtomicInteger();
        CompletableFuture<Integer> client = CompletableFuture.supplyAsync(() -> NextPairing.awaitAnswer(seg,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(30), kicks::incrementAndGet, 0, true, () -> true));
        assertTrue(NextPairing.pair(seg, 77, true));
        assertEquals(NextPairing.PAIRED, client.get(20, TimeUnit.SECONDS), "woken by the pairing");
        assertEquals(77, NextPairing.serverId(seg));
        assertEquals(1, kicks.get(), "the server kicked once, as the wait began");
        NextPairing.refuse(seg, "too late");
        assertEquals(NextPairing.PAIRED, NextPairing.state(seg), "a refusal after the pairing changes nothing");
    }

    @Test
    void aKeyTheSegmentsOtherUserMangledIsAProtocolErrorNeverAnIndexOutOfBounds() throws Exception {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        // the client's process (same user, its own mapping) may write anything there: a bad length, and a
        // length that runs the second address past the key's room
        seg.buffer.put(NextPairing.OFF_KEY, (byte) 7);
        java.net.ProtocolException bad = org.junit.jupiter.api.Assertions.assertThrows(java.net.ProtocolException.class,
                () -> NextPairing.hello(seg));
        assertTrue(bad.getMessage().contains("bad address length 7"), bad.getMessage());
        // an address length that runs past the key's room: 16 at the room's last byte
        byte[] room = new byte[NextPairing.KEY_SIZE];
        room[NextPairing.KEY_SIZE - 3] = 16;
        java.net.ProtocolException past = org.junit.jupiter.api.Assertions.assertThrows(java.net.ProtocolException.class,
                () -> io.sora.transport.WireAddresses.get(room, NextPairing.KEY_SIZE - 3));
        assertTrue(past.getMessage().contains("truncated"), past.getMessage());
    }

    @Test
    void anEndpointTooLongForTheKeysRoomIsNotWritten() {
        byte[] small = new byte[10];
        assertEquals(-1, io.sora.transport.WireAddresses.put(small, 0, key.server()), "19 bytes do not fit in 10");
        assertEquals(0, small[0], "nothing written");
        assertEquals(7, io.sora.transport.WireAddresses.put(small, 0, key.client()), "an IPv4 endpoint: 1 + 4 + 2");
        assertEquals(key.client(), assertDoesNotThrowGet(small));
    }

    private static InetSocketAddress assertDoesNotThrowGet(byte[] b) {
        return org.junit.jupiter.api.Assertions.assertDoesNotThrow(() -> io.sora.transport.WireAddresses.get(b, 0));
    }

    @Test
    void aClientGivingAnAcceptTimeDoesNotKickWhenTheAcceptAnswersFirst() throws Exception {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        AtomicInteger kicks = new AtomicInteger();
        CompletableFuture<Integer> client = CompletableFuture.supplyAsync(() -> NextPairing.awaitAnswer(seg,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(30), kicks::incrementAndGet, TimeUnit.SECONDS.toNanos(20),
                true, () -> true));
        assertTrue(NextPairing.pair(seg, 9, true));
        assertEquals(NextPairing.PAIRED, client.get(10, TimeUnit.SECONDS), "woken by the accept's pairing");
        assertEquals(0, kicks.get(), "no kick before its time");
        assertTrue(NextPairing.pairedByAccept(seg), "the answer says an accepting thread paired");
    }

    @Test
    void aClientGivingAnAcceptTimeKicksOnceItRanOutAndTheKickedPairingAnswers() throws Exception {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        AtomicInteger kicks = new AtomicInteger();
        long delay = TimeUnit.MILLISECONDS.toNanos(20);
        long start = System.nanoTime();
        long[] kickedAt = new long[1];
        int answer = NextPairing.awaitAnswer(seg, start + TimeUnit.SECONDS.toNanos(30), () -> {
            kickedAt[0] = System.nanoTime();
            kicks.incrementAndGet();
            assertTrue(NextPairing.pair(seg, 10, false)); // the doorbell thread, as the kick makes it look
        }, delay, true, () -> true);
        assertEquals(NextPairing.PAIRED, answer);
        assertEquals(1, kicks.get());
        assertTrue(kickedAt[0] - start >= delay, "kicked only after the accept's time");
        assertFalse(NextPairing.pairedByAccept(seg), "paired after the kick, not by an accept");
    }

    @Test
    void aClientWhoseWaitRanOutWithdrawsAndTheServerCanNoLongerPairIt() {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        AtomicInteger kicks = new AtomicInteger();
        int answer = NextPairing.awaitAnswer(seg, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30),
                kicks::incrementAndGet, 0, true, () -> true);
        assertEquals(NextPairing.WITHDRAWN, answer);
        assertEquals(1, kicks.get(), "the listener was kicked once while it waited");
        assertFalse(NextPairing.pair(seg, 5, false), "withdrawn: not paired");
        assertEquals(NextPairing.WITHDRAWN, NextPairing.state(seg));
    }

    @Test
    void aRefusalEndsTheClientsWaitWithRefusedAndItsReason() throws Exception {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        CompletableFuture<Integer> client = CompletableFuture.supplyAsync(() -> NextPairing.awaitAnswer(seg,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(30), () -> { }, 0, true, () -> true));
        NextPairing.refuse(seg, "policy: not this client \u00e9");
        assertEquals(NextPairing.REFUSED, client.get(20, TimeUnit.SECONDS));
        assertEquals("policy: not this client \u00e9", NextPairing.reason(seg), "the reason read back exactly");
        assertFalse(NextPairing.pair(seg, 5, false));
    }

    @Test
    void aClientWhoseKeptChannelEndsWhileItWaitsWithdrawsWithoutWaitingOutItsDeadline() throws Exception {
        NextPairing.announce(seg);
        assertTrue(NextPairing.key(seg, key, 4096, true));
        java.util.concurrent.atomic.AtomicBoolean open = new java.util.concurrent.atomic.AtomicBoolean(true);
        CompletableFuture<Integer> client = CompletableFuture.supplyAsync(() -> NextPairing.awaitAnswer(seg,
                System.nanoTime() + TimeUnit.SECONDS.toNanos(60), () -> { }, 0, true, open::get));
        open.set(false); // the doorbell thread saw the listener's end and closed the channel
        assertEquals(NextPairing.WITHDRAWN, client.get(20, TimeUnit.SECONDS), "withdrawn long before its 60 s");
        assertFalse(NextPairing.pair(seg, 5, false), "and no longer paired by a server that comes late");
    }

    @Test
    void anAcceptSleepingOnTheAnnouncementIsWokenByTheKey() throws Exception {
        NextPairing.announce(seg);
        CompletableFuture<Void> accept = CompletableFuture.runAsync(
                () -> NextPairing.awaitKeyed(seg, TimeUnit.SECONDS.toNanos(30)));
        // until the accept sleeps with its bit set (or, on a slow machine, still yields)
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (((int) INTS.getVolatile(seg.buffer, Segment.OFF_NEXT) & NextPairing.SERVER_WAITS) == 0
                && System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
        assertTrue(((int) INTS.getVolatile(seg.buffer, Segment.OFF_NEXT) & NextPairing.SERVER_WAITS) != 0,
                "the accept sleeps on the word");
        assertTrue(NextPairing.key(seg, key, 4096, true));
        accept.get(20, TimeUnit.SECONDS);
        assertEquals(NextPairing.KEYED, NextPairing.state(seg), "the waiting bit cleared by the move");
        assertEquals(NextPairing.KEYED, (int) INTS.getVolatile(seg.buffer, Segment.OFF_NEXT));
    }
}
