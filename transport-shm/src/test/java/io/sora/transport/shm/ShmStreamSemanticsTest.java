package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.FastConnection;
import io.sora.transport.RingConnection;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Every socket semantic on a real shm pair (two mapped views of one segment, real control channels). */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmStreamSemanticsTest {
    static final int RING = 64;

    @TempDir
    Path tmp;
    ShmFixture fx;
    ShmFixture.Pair p;

    @BeforeEach
    void pair() throws Exception {
        fx = new ShmFixture(tmp, RING, RING);
        p = fx.pair();
    }

    @AfterEach
    void close() throws Exception {
        fx.close();
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] out = new byte[n];
        int got = 0;
        while (got < n) {
            int r = in.read(out, got, n - got);
            if (r < 0) throw new IOException("EOF after " + got + " of " + n);
            got += r;
        }
        return out;
    }

    /**
     * Waits (bounded) until {@code t} is asleep (parked, or in a futex in the kernel), i.e. truly
     * blocked rather than spinning, yielding or done.
     */
    static void awaitParked(Thread t) throws InterruptedException {
        for (int i = 0; i < 500; i++) {
            if (io.sora.transport.ThreadStates.isAsleep(t)) return;
            Thread.sleep(5);
        }
        throw new AssertionError("thread " + t.getName() + " never went to sleep: " + t.getState());
    }

    /** Runs {@code body} on a named thread and returns it with a future for its outcome. */
    static <T> Object[] start(String name, java.util.concurrent.Callable<T> body) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return new Object[] {t, f};
    }

    @SuppressWarnings("unchecked")
    static <T> Future<T> future(Object[] started) {
        return (Future<T>) started[1];
    }

    static Throwable failure(Future<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void readReturnsWhatIsThereAndCountsBytes() throws IOException {
        p.client().outputStream().write(new byte[] {1, 2, 3});
        byte[] buf = new byte[50];
        assertEquals(3, p.server().inputStream().read(buf, 0, 50));
        assertArrayEquals(new byte[] {1, 2, 3}, Arrays.copyOf(buf, 3));
        assertEquals(0, p.server().inputStream().read(buf, 0, 0));
        p.server().outputStream().write(255);
        p.server().outputStream().flush();
        assertEquals(1, p.client().inputStream().available());
        assertEquals(255, p.client().inputStream().read());
        assertEquals(0, p.client().inputStream().available());
        assertEquals(3, p.client().bytesSent());
        assertEquals(3, p.server().bytesReceived());
        assertEquals(1, p.server().bytesSent());
        assertEquals("shm", p.client().path());
        assertTrue(p.client().id() != p.server().id());
    }

    @Test
    void soTimeoutThrowsLosesNothingAndStreamStaysUsable() throws IOException {
        p.serverHooks().soTimeout = 30;
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class, () -> p.server().inputStream().read(new byte[4]));
        assertEquals("Read timed out", e.getMessage());
        p.client().outputStream().write(new byte[] {4, 5});
        p.serverHooks().soTimeout = 0;
        assertArrayEquals(new byte[] {4, 5}, readExactly(p.server().inputStream(), 2));
    }

    @Test
    void wrapAroundAtEveryOffsetClass() throws IOException {
        long seed = 0;
        for (int start = 0; start < RING; start++) {
            // exact fit of the room to the ring's end, one byte over, a whole ring, and more than a ring
            int room = RING - start;
            for (int size : new int[] {room, room + 1, RING, 1}) {
                if (size > RING) size = RING;
                byte[] data = random(size, seed++);
                p.client().outputStream().write(data);
                assertArrayEquals(data, readExactly(p.server().inputStream(), size), "start " + start + " size " + size);
            }
        }
    }

    @Test
    void writeMuchLargerThanTheRingIsChunked() throws Exception {
        byte[] data = random(1 << 20, 3);
        Object[] reader = start("reader", () -> readExactly(p.server().inputStream(), data.length));
        p.client().outputStream().write(data);
        assertArrayEquals(data, ShmStreamSemanticsTest.<byte[]>future(reader).get(30, TimeUnit.SECONDS));
    }

    @Test
    void shutdownOutputGivesEofAfterTheBytesAndTheOtherDirectionWorks() throws IOException {
        p.client().outputStream().write(new byte[] {1, 2});
        p.client().shutdownOutput();
        assertArrayEquals(new byte[] {1, 2}, readExactly(p.server().inputStream(), 2));
        assertEquals(-1, p.server().inputStream().read(new byte[4]));
        assertEquals(-1, p.server().inputStream().read());
        p.server().outputStream().write(new byte[] {7});
        assertEquals(7, p.client().inputStream().read());
        SocketException e = assertThrows(SocketException.class, () -> p.client().outputStream().write(1));
        assertEquals("Socket output is shutdown", e.getMessage());
    }

    @Test
    void shutdownInputReturnsEofAndDiscardsWithoutBlockingThePeer() throws IOException {
        p.client().outputStream().write(new byte[40]);
        p.server().shutdownInput();
        assertEquals(-1, p.server().inputStream().read());
        assertEquals(0, p.server().inputStream().available());
        p.client().outputStream().write(new byte[100_000]); // >> ring: must not block
        p.server().outputStream().write(9);
        assertEquals(9, p.client().inputStream().read());
    }

    @Test
    void closeWakesTheLocalReaderAndThePeerDrainsThenSeesEof() throws Exception {
        Object[] r = start("blocked-reader", () -> p.server().inputStream().read(new byte[8]));
        awaitParked((Thread) r[0]);
        p.server().outputStream().write(new byte[] {1, 2, 3});
        p.server().inputStream().close(); // closing a stream closes the socket
        assertEquals("Socket closed", failure(future(r)).getMessage());
        p.server().close(); // idempotent
        assertArrayEquals(new byte[] {1, 2, 3}, readExactly(p.client().inputStream(), 3));
        assertEquals(-1, p.client().inputStream().read());
        // as over TCP: the first write after the peer's close is taken (its kernel answers with a reset), the next fails
        p.client().outputStream().write(new byte[10]);
        SocketException w = assertThrows(SocketException.class, () -> p.client().outputStream().write(new byte[10]));
        assertEquals("Broken pipe", w.getMessage());
        assertEquals("Socket closed", assertThrows(SocketException.class, () -> p.server().inputStream().read()).getMessage());
        assertEquals("Socket closed", assertThrows(SocketException.class, () -> p.server().outputStream().write(1)).getMessage());
        assertEquals("Socket closed", assertThrows(SocketException.class, () -> p.server().inputStream().available()).getMessage());
    }

    @Test
    void closeWakesAWriterBlockedForCredits() throws Exception {
        Object[] w = start("blocked-writer", () -> {
            p.client().outputStream().write(new byte[RING * 4]);
            return null;
        });
        awaitParked((Thread) w[0]);
        p.client().outputStream().close();
        assertEquals("Socket closed", failure(future(w)).getMessage());
    }

    @Test
    void peerClosingWhileWeWaitForCreditsIsAnIoExceptionNotAHang() throws Exception {
        Object[] w = start("blocked-writer", () -> {
            p.client().outputStream().write(new byte[RING * 4]);
            return null;
        });
        awaitParked((Thread) w[0]);
        p.server().close();
        Throwable t = failure(future(w));
        assertTrue(t instanceof SocketException, t.toString());
        assertEquals("Broken pipe", t.getMessage());
    }

    @Test
    void peerDeathDrainsTheReaderAndResetsABlockedWriter() throws Exception {
        p.client().outputStream().write(new byte[] {6, 6});
        Object[] w = start("blocked-writer", () -> {
            p.server().outputStream().write(new byte[RING * 4]);
            return null;
        });
        awaitParked((Thread) w[0]);
        // The client "dies": its control channel drops without a close marker.
        ((ShmMedium) ((RingConnection) p.client()).medium()).closeChannel();
        assertEquals("Connection reset by peer", failure(future(w)).getMessage());
        assertArrayEquals(new byte[] {6, 6}, readExactly(p.server().inputStream(), 2));
        // it died with this side's bytes unread: its kernel would have reset the connection, not ended it
        assertEquals("Connection reset", assertThrows(SocketException.class, () -> p.server().inputStream().read()).getMessage());
        assertTrue(fx.tracer.of(io.sora.trace.Hook.SHM_PEER_CLOSED).stream().anyMatch(e -> e.contains("peer died")),
                fx.tracer.events.toString());
    }

    /**
     * The peer dies between its swap of this side's waiting word (which tells every later waker that the
     * wake is on its way) and its futex wake: the writer sleeping in the futex must still return when the
     * peer's end is seen (docs/reliability.md, bug 21: PeerKillIT's survivor once stayed stuck so).
     */
    @Test
    void aWriterWhosePeerDiedBetweenItsSwapAndItsWakeStillReturns() throws Exception {
        assertTrue(io.sora.transport.Futex.isAvailable(), "sora's native library: the futex is what this is about");
        Object[] w = start("blocked-writer", () -> {
            p.server().outputStream().write(new byte[RING * 4]);
            return null;
        });
        awaitParked((Thread) w[0]);
        ShmMedium server = (ShmMedium) ((RingConnection) p.server()).medium();
        server.announceWriterWaiting(false); // the client's reader swapped the writer's word to 0...
        ((ShmMedium) ((RingConnection) p.client()).medium()).closeChannel(); // ...and died before its wake
        assertEquals("Connection reset by peer", failure(future(w)).getMessage());
        assertTrue(server.sleeps()[2] >= 1, "the writer slept in the futex: " + java.util.Arrays.toString(server.sleeps()));
    }

    @Test
    void anIdleReaderIsParkedNotSpinning() throws Exception {
        Object[] r = start("idle-reader", () -> p.client().inputStream().read());
        Thread t = (Thread) r[0];
        awaitParked(t);
        Thread.sleep(50);
        assertTrue(io.sora.transport.ThreadStates.isAsleep(t), "still asleep 50 ms later: " + t.getState());
        p.server().outputStream().write(42);
        assertEquals(42, ShmStreamSemanticsTest.<Integer>future(r).get(10, TimeUnit.SECONDS));
    }

    @Test
    void readerAndWriterThreadsAtOnceThenCloseFromAThirdThread() throws Exception {
        FastConnection c = p.client();
        byte[] data = random(200_000, 11);
        Object[] echo = start("server-echo", () -> {
            byte[] buf = new byte[777];
            int n;
            while ((n = p.server().inputStream().read(buf)) > 0) p.server().outputStream().write(buf, 0, n);
            return null;
        });
        Object[] writer = start("client-writer", () -> {
            c.outputStream().write(data);
            return null;
        });
        byte[] back = readExactly(c.inputStream(), data.length);
        assertArrayEquals(data, back);
        future(writer).get(20, TimeUnit.SECONDS);
        Object[] reader = start("client-reader", () -> c.inputStream().read());
        awaitParked((Thread) reader[0]);
        Thread closer = new Thread(() -> {
            try {
                c.close();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, "closer");
        closer.start();
        closer.join(10_000);
        assertFalse(closer.isAlive());
        assertEquals("Socket closed", failure(future(reader)).getMessage());
        // The server's echo loop sees EOF and ends normally.
        assertEquals(null, future(echo).get(20, TimeUnit.SECONDS));
    }

    @Test
    void steadyStateReadsAndWritesAllocateNothing() throws IOException {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        byte[] out = new byte[48];
        byte[] in = new byte[48];
        long tid = Thread.currentThread().getId();
        for (int round = 0; round < 2; round++) { // the first round warms up (class loading, lock nodes)
            long before = mx.getThreadAllocatedBytes(tid);
            for (int i = 0; i < 20_000; i++) {
                out[0] = (byte) i;
                p.client().outputStream().write(out, 0, 17 + (i & 31)); // offsets move round the 64-byte ring
                int n = p.server().inputStream().read(in, 0, in.length);
                assertEquals(17 + (i & 31), n);
                assertEquals((byte) i, in[0]);
            }
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            if (round == 1) assertTrue(allocated < 4096, "allocated " + allocated + " bytes in 20000 write+read pairs");
        }
    }
}
