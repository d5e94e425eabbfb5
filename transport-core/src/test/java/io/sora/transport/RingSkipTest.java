package io.sora.transport;

import static io.sora.transport.RingStreamsTest.random;
import static io.sora.transport.RingStreamsTest.readExactly;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writes that keep to the start of the ring while the reader keeps up ({@link RingMedium#keepWithin}): the
 * writer skips back to the ring's start when it finds the ring empty, the reader jumps the skipped cursors.
 * Every byte must arrive in order, a reader that falls behind must still leave the writer the whole ring,
 * and a skip must never be read as bytes.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingSkipTest {
    private static final int RING = 64 * 1024;
    private static final int KEEP = 8 * 1024;

    private HeapRingMedium[] media;
    private RingConnection a;
    private RingConnection b;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "ring-skip-test");
        t.setDaemon(true);
        return t;
    });

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private void open(int keepWithin) {
        media = HeapRingMedium.pair(RING, RING, keepWithin);
        TestHooks hooksA = new TestHooks();
        TestHooks hooksB = new TestHooks();
        a = new RingConnection(RingConnection.nextId(), "heap", media[0], hooksA, 10);
        b = new RingConnection(RingConnection.nextId(), "heap", media[1], hooksB, 10);
        hooksA.connection = a;
        hooksB.connection = b;
    }

    @Test
    void messagesReadAsTheyComeStayInTheFirstBytesOfTheRing() throws IOException {
        open(KEEP);
        for (int i = 0; i < 200; i++) {
            byte[] request = random(4096, i);
            a.outputStream().write(request);
            assertArrayEquals(request, readExactly(b.inputStream(), request.length), "request " + i);
            byte[] answer = random(1000 + i, -i);
            b.outputStream().write(answer);
            assertArrayEquals(answer, readExactly(a.inputStream(), answer.length), "answer " + i);
        }
        assertTrue(media[0].skips() > 50, "the writer skipped back: " + media[0].skips());
        assertTrue(media[0].furthestWritten() <= KEEP, "written up to " + media[0].furthestWritten());
        assertTrue(media[1].furthestWritten() <= KEEP, "written up to " + media[1].furthestWritten());
    }

    @Test
    void withoutKeepingTheMessagesGoRoundTheWholeRing() throws IOException {
        open(0); // the control: the same traffic fills the ring in turn, so the test above can fail
        for (int i = 0; i < 200; i++) {
            byte[] request = random(4096, i);
            a.outputStream().write(request);
            assertArrayEquals(request, readExactly(b.inputStream(), request.length), "request " + i);
        }
        assertEquals(0, media[0].skips());
        assertEquals(RING, media[0].furthestWritten());
    }

    @Test
    void aReaderThatDoesNotReadStillLeavesTheWriterTheWholeRing() throws IOException {
        open(KEEP);
        // first a skip, so the writer is at the ring's start with the peer's credits behind its skip
        a.outputStream().write(random(6000, 1));
        readExactly(b.inputStream(), 6000);
        a.outputStream().write(random(4000, 2));
        readExactly(b.inputStream(), 4000);
        assertEquals(1, media[0].skips());
        // the peer reads nothing now: a non-blocking write takes exactly what a whole ring holds
        byte[] data = random(RING + 5000, 3);
        int taken = a.outputStream().write(ByteBuffer.wrap(data), false);
        assertEquals(RING, taken, "the whole ring, not the first " + KEEP + " bytes");
        assertEquals(0, a.outputStream().write(ByteBuffer.wrap(data, taken, data.length - taken), false));
        assertEquals(RING, b.inputStream().available(), "available counts bytes, not skipped cursors");
        byte[] got = readExactly(b.inputStream(), RING);
        byte[] want = new byte[RING];
        System.arraycopy(data, 0, want, 0, RING);
        assertArrayEquals(want, got);
    }

    @Test
    void theSkippedCursorsAreRoomWhileThePeersCreditsLagBehindThem() throws IOException {
        open(KEEP);
        a.outputStream().write(random(6000, 1));
        readExactly(b.inputStream(), 6000); // credits: 6000
        byte[] first = random(4000, 2);
        a.outputStream().write(first); // skips to 65536; unread, so the credits stay at 6000
        assertEquals(1, media[0].skips());
        byte[] second = random(2000, 3);
        a.outputStream().write(second);
        assertTrue(a.outputStream().writable(), "6000 bytes in a 64 KiB ring: room (cursors 6000 to 65536 are none)");
        byte[] rest = random(RING - 6000, 4);
        a.outputStream().write(rest); // fills the ring exactly, without waiting
        assertTrue(!a.outputStream().writable(), "full now");
        assertArrayEquals(first, readExactly(b.inputStream(), first.length));
        assertTrue(a.outputStream().writable(), "room once bytes are read");
        assertArrayEquals(second, readExactly(b.inputStream(), second.length));
        assertArrayEquals(rest, readExactly(b.inputStream(), rest.length));
    }

    @Test
    void availableBeforeTheReadJumpsTheSkip() throws IOException {
        open(KEEP);
        a.outputStream().write(random(7000, 1));
        readExactly(b.inputStream(), 7000);
        byte[] data = random(3000, 2); // 7000 + 3000 > 8192: to the ring's start
        a.outputStream().write(data);
        assertEquals(1, media[0].skips());
        assertEquals(3000, b.inputStream().available());
        assertTrue(b.inputStream().readable());
        assertArrayEquals(data, readExactly(b.inputStream(), 3000));
        assertEquals(0, b.inputStream().available());
    }

    @Test
    void writesOfEverySizeAgainstAReaderOfEverySizeLoseNothing() throws Exception {
        open(KEEP);
        Random sizes = new Random(42);
        byte[] data = random(8 << 20, 9);
        Future<byte[]> reader = CompletableFuture.supplyAsync(() -> {
            try {
                byte[] out = new byte[data.length];
                Random r = new Random(43);
                int got = 0;
                InputStream in = b.inputStream();
                while (got < out.length) {
                    int n = in.read(out, got, Math.min(out.length - got, 1 + r.nextInt(r.nextBoolean() ? 100 : 70_000)));
                    if (n < 0) throw new IOException("EOF after " + got);
                    got += n;
                    if (r.nextInt(64) == 0) Thread.yield(); // now and then behind: the writer then goes round the ring
                }
                return out;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, pool);
        OutputStream out = a.outputStream();
        for (int off = 0; off < data.length; ) {
            int n = Math.min(data.length - off, 1 + sizes.nextInt(sizes.nextBoolean() ? 200 : 100_000));
            out.write(data, off, n);
            off += n;
        }
        assertArrayEquals(data, reader.get(25, TimeUnit.SECONDS));
        assertTrue(media[0].skips() > 0, "some writes found the ring empty and skipped");
    }

    @Test
    void aReadCursorBeyondTheWritesSeenWhenLookingForASkipBreaksTheConnection() throws Exception {
        open(KEEP);
        a.outputStream().write(new byte[6000]);
        media[1].publishConsumed(1_000_000); // a faulty peer; the next write looks at its cursor for a skip
        SocketException e = assertThrows(SocketException.class, () -> a.outputStream().write(new byte[100_000]));
        assertTrue(e.getMessage().startsWith("Connection reset by peer: its read cursor"), e.getMessage());
    }

    @Test
    void aSkipPastThePeersWriteCursorBreaksTheConnection() throws Exception {
        open(KEEP);
        a.outputStream().write(new byte[100]);
        readExactly(b.inputStream(), 100);
        media[0].publishSkipTo(1_000_000); // a faulty peer: a skip beyond the bytes it published
        media[0].publishProduced(200);
        SocketException e = assertThrows(SocketException.class, () -> b.inputStream().read(new byte[8]));
        assertTrue(e.getMessage().startsWith("Connection reset: the peer skipped to 1000000"), e.getMessage());
        assertThrows(SocketException.class, () -> b.inputStream().read());
    }
}
