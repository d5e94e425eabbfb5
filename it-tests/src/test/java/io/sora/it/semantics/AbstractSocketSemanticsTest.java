package io.sora.it.semantics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Socket semantics that must hold identically on every path (netty's testsuite pattern): the same
 * assertions run over plain TCP ({@link TcpSemanticsTest}, agent attached with no rules) and over
 * shared memory ({@link ShmSemanticsTest}, agent attached with shm rules for loopback). Each
 * subclass also proves which path its connections really took.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractSocketSemanticsTest {
    private ServerSocket server;
    private Socket client;
    private Socket accepted;

    /** "tcp", "shm" or "rdma": the path every connection of this suite must be on. */
    protected abstract String expectedPath();

    /**
     * Whether two ends that each write more than the path's buffers before reading still finish: TCP's
     * kernel buffers, shm's and RDMA's move to TCP (docs/shm.md, "Buffering"). A path that keeps such an
     * exchange in its rings says false (none now).
     */
    protected boolean movesFullRingsToTcp() {
        return true;
    }

    /** The address the server binds and the client connects to; RDMA needs the RDMA interface's. */
    protected InetAddress address() {
        return InetAddress.getLoopbackAddress();
    }

    @BeforeEach
    void connect() throws IOException {
        server = new ServerSocket(0, 50, address());
        client = new Socket(address(), server.getLocalPort());
        accepted = server.accept();
        assertEquals(expectedPath(), SoraPath.of(client), "client path");
        assertEquals(expectedPath(), SoraPath.of(accepted), "server path");
    }

    @AfterEach
    void close() throws IOException {
        client.close();
        accepted.close();
        server.close();
    }

    /**
     * A read needs nothing but its stream: not the socket's monitor, which another thread may hold (a
     * writer serialising its messages with {@code synchronized (socket)}), as a TCP read never takes it.
     * On JDK 17 a paired read about to wait read {@code getSoTimeout()}, {@code synchronized} there, and
     * waited for the monitor instead of reading (docs/reliability.md, bug 38). Also: a timeout set
     * after the pairing is the one the next read waits with.
     */
    @Test
    void aReadNeedsNotTheSocketsMonitorAndFollowsATimeoutSetLater() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            InputStream in = accepted.getInputStream();
            Future<Integer> read;
            Thread reader = threadOf(pool);
            synchronized (accepted) {
                read = pool.submit(() -> in.read());
                io.sora.it.Blocked.awaitBlockedIn(reader, "read");
                client.getOutputStream().write(7);
                assertEquals(7, read.get(10, TimeUnit.SECONDS), "read while another thread holds the socket's monitor");
            }
            accepted.setSoTimeout(200);
            assertThrows(SocketTimeoutException.class, in::read, "the timeout set after the pairing");
            accepted.setSoTimeout(0);
            client.getOutputStream().write(8);
            assertEquals(8, in.read());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * An abortive close (SO_LINGER 0) resets the connection: the peer reads the bytes sent before it,
     * then "Connection reset" (again at the next read), and its writes fail, as over TCP on JDK 17 and
     * 25. Before, a paired socket's peer read the end of the stream: a truncated answer looked whole
     * (docs/reliability.md, bug 39).
     */
    @Test
    void anAbortiveCloseResetsThePeerAfterTheBytesSentBeforeIt() throws IOException {
        accepted.getOutputStream().write(new byte[] {1, 2, 3});
        accepted.setSoLinger(true, 0);
        accepted.close();
        InputStream in = client.getInputStream();
        assertEquals(1, in.read());
        assertEquals(2, in.read());
        assertEquals(3, in.read());
        assertEquals("Connection reset", assertThrows(SocketException.class, in::read).getMessage());
        assertEquals("Connection reset", assertThrows(SocketException.class, in::read).getMessage());
        assertThrows(SocketException.class, () -> client.getOutputStream().write(9));
    }

    /**
     * A server that answers and closes at once ("503", "too many connections"), and a client that sends its
     * request before reading: the request's write is taken, as TCP's first write after the peer's close is
     * (its kernel answers with a reset), and the answer is read; only a later write fails. Over shm the
     * request's write failed with "Broken pipe" and the answer was never read (found in review, 2026-11-29).
     */
    @Test
    void aRequestWrittenAfterTheServersAnswerAndCloseIsTakenAndTheAnswerRead() throws Exception {
        byte[] answer = "ERR too many connections\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        accepted.getOutputStream().write(answer);
        accepted.close();
        InputStream in = client.getInputStream();
        // the end has reached the client before it writes (over TCP, its FIN; over shm, the close's flag)
        byte[] got = in.readNBytes(answer.length);
        assertArrayEquals(answer, got);
        client.getOutputStream().write("GET /\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        // then, over TCP, the reset comes back; the writes after it fail
        IOException later = null;
        for (int i = 0; i < 200 && later == null; i++) {
            try {
                client.getOutputStream().write(1);
                Thread.sleep(5); // the reset's round trip, over TCP: a bounded poll of the condition
            } catch (IOException e) {
                later = e;
            }
        }
        assertTrue(later instanceof SocketException, String.valueOf(later));
    }

    /** The linger set as an option, on the client: the server's reads are reset after its bytes. */
    @Test
    void aLingerOfZeroSetAsAnOptionResetsToo() throws IOException {
        client.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
        client.getOutputStream().write(5);
        client.close();
        InputStream in = accepted.getInputStream();
        assertEquals(5, in.read());
        assertEquals("Connection reset", assertThrows(SocketException.class, in::read).getMessage());
    }

    /** A linger of some seconds is an orderly close: the peer reads the bytes, then the end. */
    @Test
    void aLingerOfSomeSecondsClosesAsUsual() throws IOException {
        accepted.setSoLinger(true, 5);
        accepted.getOutputStream().write(4);
        accepted.close();
        InputStream in = client.getInputStream();
        assertEquals(4, in.read());
        assertEquals(-1, in.read());
    }

    /** The one thread of an idle single-thread executor (it runs a task to say which). */
    private static Thread threadOf(ExecutorService single) throws Exception {
        return single.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
    }

    /**
     * A flush, and a write of nothing, after the socket closed or its output shut down do nothing, as
     * the JDK's socket stream (Thrift closes its buffered output stream after the socket: a flush there
     * must not throw).
     */
    @Test
    void flushAndEmptyWritesAfterCloseOrShutdownDoNothing() throws IOException {
        OutputStream out = client.getOutputStream();
        client.shutdownOutput();
        out.write(new byte[0]);
        out.flush();
        java.io.BufferedOutputStream buffered = new java.io.BufferedOutputStream(out);
        client.getInputStream().close(); // closes the socket
        out.flush();
        out.write(new byte[0]);
        buffered.close();
    }

    /** Once a read returned the end, reads return it for good, even after the socket closed, as the JDK's. */
    @Test
    void theEndStaysTheEndAfterClose() throws IOException {
        InputStream in = accepted.getInputStream();
        client.close();
        assertEquals(-1, in.read());
        accepted.close();
        assertEquals(-1, in.read());
        assertEquals(-1, in.read(new byte[8]));
    }

    /** The same after shutdownInput's end. */
    @Test
    void theEndOfAShutdownInputStaysTheEndAfterClose() throws IOException {
        InputStream in = accepted.getInputStream();
        accepted.shutdownInput();
        assertEquals(-1, in.read());
        accepted.close();
        assertEquals(-1, in.read());
    }

    /**
     * Stream writes racing a close from another thread: every write that returned delivered its bytes
     * (the peer reads at least what they counted, and at most one write's worth more: the part of the
     * write the close cut short that had gone), as over TCP. Over many rounds, the close landing at a
     * different point of the writes in each.
     */
    @Test
    void writesRacingACloseDeliverEveryByteOfTheWritesThatReturned() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Random random = new Random(11);
            byte[] chunk = new byte[1 << 16];
            for (int round = 0; round < 100; round++) {
                try (Socket c = new Socket(address(), server.getLocalPort()); Socket a = server.accept()) {
                    assertEquals(expectedPath(), SoraPath.of(a), "round " + round);
                    Future<Long> got = pool.submit(() -> {
                        long n = 0;
                        byte[] b = new byte[1 << 16];
                        InputStream in = a.getInputStream();
                        for (int r; (r = in.read(b)) >= 0; ) n += r;
                        return n;
                    });
                    java.util.concurrent.CountDownLatch going = new java.util.concurrent.CountDownLatch(1);
                    Future<Long> sent = pool.submit(() -> {
                        long n = 0;
                        OutputStream out = c.getOutputStream();
                        try {
                            for (int i = 0; i < 1_000_000; i++) {
                                out.write(chunk);
                                n += chunk.length;
                                going.countDown();
                            }
                            throw new AssertionError("never closed");
                        } catch (SocketException e) {
                            return n;
                        }
                    });
                    assertTrue(going.await(10, TimeUnit.SECONDS), "round " + round + ": writing");
                    java.util.concurrent.locks.LockSupport.parkNanos(random.nextInt(500_000));
                    c.close();
                    long counted = sent.get(10, TimeUnit.SECONDS);
                    long read = got.get(10, TimeUnit.SECONDS);
                    assertTrue(read >= counted && read <= counted + chunk.length,
                            "round " + round + ": the writes that returned counted " + counted + " bytes, the peer read " + read);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void readReturnsWhatIsThereWithoutWaitingToFillTheBuffer() throws IOException {
        client.getOutputStream().write(bytes(10, 1));
        byte[] buf = new byte[1000];
        int total = 0;
        InputStream in = accepted.getInputStream();
        for (int i = 0; i < 10 && total < 10; i++) {
            int n = in.read(buf, total, buf.length - total);
            assertTrue(n > 0 && n <= 10 - total, "read returned " + n);
            total += n;
        }
        assertEquals(10, total);
        assertArrayEquals(bytes(10, 1), java.util.Arrays.copyOf(buf, 10));
    }

    @Test
    void zeroLengthReadReturnsZeroAtOnce() throws IOException {
        assertEquals(0, accepted.getInputStream().read(new byte[8], 3, 0));
    }

    @Test
    void singleByteReadAndWrite() throws IOException {
        client.getOutputStream().write(200);
        assertEquals(200, accepted.getInputStream().read());
    }

    @Test
    void availableCountsBytesReadableWithoutBlocking() throws Exception {
        InputStream in = accepted.getInputStream();
        assertEquals(0, in.available());
        client.getOutputStream().write(bytes(300, 2));
        int available = 0;
        for (int i = 0; i < 500 && available < 300; i++) {
            available = in.available();
            if (available < 300) {
                Thread.sleep(10);
            }
        }
        assertEquals(300, available);
        byte[] buf = new byte[300];
        readFully(in, buf);
        assertArrayEquals(bytes(300, 2), buf);
        assertEquals(0, in.available());
    }

    /**
     * A read with {@code SO_TIMEOUT} behind another thread's read without one: where the JDK counts the wait
     * for the read lock in the timeout (JDK 25's {@code NioSocketImpl} takes it with {@code tryLock}) it
     * times out while the first read goes on; where it does not (JDK 17) it waits for the lock and then
     * reads. The TCP run of this suite checks the expectation against the JDK itself. On shm the second
     * read waited for the lock on JDK 25 too until 2026-11-29.
     */
    @Test
    void aReadWithATimeoutBehindAnotherThreadsReadWaitsForItAsTheJdksDoes() throws Exception {
        int feature = Runtime.version().feature();
        org.junit.jupiter.api.Assumptions.assumeTrue(feature == 17 || feature >= 25, "known for JDK 17 and 25 only");
        boolean counts = feature >= 25;
        InputStream in = accepted.getInputStream();
        java.util.concurrent.CompletableFuture<Integer> first = new java.util.concurrent.CompletableFuture<>();
        Thread a = reading(in, first, "first-reader");
        io.sora.it.Blocked.awaitBlockedIn(a, "read");
        accepted.setSoTimeout(300);
        java.util.concurrent.CompletableFuture<Integer> second = new java.util.concurrent.CompletableFuture<>();
        Thread b = reading(in, second, "second-reader");
        if (counts) {
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> second.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof SocketTimeoutException, "the second read: " + e.getCause());
            assertFalse(first.isDone(), "the first read (no timeout) ended: " + first);
            client.getOutputStream().write(new byte[] {7, 8});
            assertEquals(7, first.get(10, TimeUnit.SECONDS));
            accepted.setSoTimeout(0);
            assertEquals(8, in.read());
        } else {
            io.sora.it.Blocked.awaitBlockedIn(b, "read");
            client.getOutputStream().write(new byte[] {7, 8});
            assertEquals(7, first.get(10, TimeUnit.SECONDS));
            assertEquals(8, second.get(10, TimeUnit.SECONDS), "the second read, once the first left");
        }
    }

    private static Thread reading(InputStream in, java.util.concurrent.CompletableFuture<Integer> result, String name) {
        Thread t = new Thread(() -> {
            try {
                result.complete(in.read());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void soTimeoutThrowsAndTheStreamStaysUsable() throws IOException {
        accepted.setSoTimeout(200);
        InputStream in = accepted.getInputStream();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class, () -> in.read(new byte[10]));
        assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
        client.getOutputStream().write(bytes(5, 3));
        byte[] buf = new byte[5];
        readFully(in, buf);
        assertArrayEquals(bytes(5, 3), buf);
    }

    @Test
    void shutdownOutputGivesEofWhileTheOtherDirectionWorks() throws IOException {
        client.getOutputStream().write(bytes(100, 4));
        client.shutdownOutput();
        InputStream in = accepted.getInputStream();
        byte[] buf = new byte[100];
        readFully(in, buf);
        assertArrayEquals(bytes(100, 4), buf);
        assertEquals(-1, in.read());
        assertEquals(-1, in.read(new byte[10], 0, 10));
        accepted.getOutputStream().write(bytes(50, 5));
        byte[] back = new byte[50];
        readFully(client.getInputStream(), back);
        assertArrayEquals(bytes(50, 5), back);
        assertThrows(IOException.class, () -> client.getOutputStream().write(1));
    }

    @Test
    void closeByClientGivesEofAtServerAfterTheData() throws IOException {
        client.getOutputStream().write(bytes(64, 6));
        client.close();
        InputStream in = accepted.getInputStream();
        byte[] buf = new byte[64];
        readFully(in, buf);
        assertArrayEquals(bytes(64, 6), buf);
        assertEquals(-1, in.read());
    }

    @Test
    void closeByServerGivesEofAtClient() throws IOException {
        accepted.getOutputStream().write(bytes(64, 7));
        accepted.close();
        InputStream in = client.getInputStream();
        byte[] buf = new byte[64];
        readFully(in, buf);
        assertArrayEquals(bytes(64, 7), buf);
        assertEquals(-1, in.read());
    }

    @Test
    void writingToAClosedPeerFailsWithIOException() throws Exception {
        accepted.close();
        OutputStream out = client.getOutputStream();
        IOException failure = null;
        for (int i = 0; i < 200 && failure == null; i++) {
            try {
                out.write(bytes(1024, 8));
                Thread.sleep(5);
            } catch (IOException e) {
                failure = e;
            }
        }
        assertTrue(failure != null, "writes to a closed peer never failed");
    }

    @Test
    void blockedReadReturnsWhenTheLocalSocketIsClosed() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            InputStream in = accepted.getInputStream();
            java.util.concurrent.atomic.AtomicReference<Boolean> closedWhenItFailed = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicReference<Thread> reader = new java.util.concurrent.atomic.AtomicReference<>();
            Future<Integer> read = pool.submit(() -> {
                reader.set(Thread.currentThread());
                try {
                    return in.read(new byte[10]);
                } catch (SocketException e) {
                    // applications tell "I closed it" from "it broke" this way (the JDK's own pattern)
                    closedWhenItFailed.set(accepted.isClosed());
                    throw e;
                }
            });
            awaitBlockedInRead(reader);
            accepted.close();
            Exception e = assertThrows(Exception.class, () -> read.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof SocketException, "cause " + e.getCause());
            assertEquals(Boolean.TRUE, closedWhenItFailed.get(), "isClosed() when the blocked read failed");
            assertThrows(SocketException.class, () -> accepted.getInputStream());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void blockedReadSeesEofWhenThePeerCloses() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.atomic.AtomicReference<Thread> reader = new java.util.concurrent.atomic.AtomicReference<>();
            Future<Integer> read = pool.submit(() -> {
                reader.set(Thread.currentThread());
                return accepted.getInputStream().read(new byte[10]);
            });
            awaitBlockedInRead(reader);
            client.close();
            assertEquals(-1, read.get(10, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void oneReaderAndOneWriterThreadAtOnceInBothDirections() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            int size = 8 << 20;
            Future<byte[]> c2s = pool.submit(() -> sendRandom(client.getOutputStream(), size, 11));
            Future<byte[]> s2c = pool.submit(() -> sendRandom(accepted.getOutputStream(), size, 12));
            Future<byte[]> atServer = pool.submit(() -> receive(accepted.getInputStream(), size));
            Future<byte[]> atClient = pool.submit(() -> receive(client.getInputStream(), size));
            assertArrayEquals(c2s.get(), atServer.get());
            assertArrayEquals(s2c.get(), atClient.get());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aWriteFarLargerThanAnyBufferArrivesWhole() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            byte[] big = new byte[16 << 20];
            new Random(13).nextBytes(big);
            Future<byte[]> got = pool.submit(() -> {
                byte[] b = new byte[big.length];
                readFully(accepted.getInputStream(), b);
                return b;
            });
            client.getOutputStream().write(big);
            assertArrayEquals(big, got.get());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void addressesAndPortsAreThoseOfTheTcpConnection() {
        assertEquals(server.getLocalPort(), client.getPort());
        assertEquals(server.getLocalPort(), accepted.getLocalPort());
        assertEquals(client.getLocalPort(), accepted.getPort());
        assertEquals(address(), client.getInetAddress());
        assertEquals(client.getLocalSocketAddress(), accepted.getRemoteSocketAddress());
        assertEquals(accepted.getLocalSocketAddress(), client.getRemoteSocketAddress());
        assertEquals(new InetSocketAddress(address(), server.getLocalPort()),
                client.getRemoteSocketAddress());
    }

    @Test
    void aSocketDroppedWithoutCloseEndsForThePeerOnceCollected() throws Exception {
        Socket dropped = new Socket(address(), server.getLocalPort());
        Socket peer = server.accept();
        assertEquals(expectedPath(), SoraPath.of(dropped));
        dropped.getOutputStream().write(bytes(10, 9));
        dropped = null;
        peer.setSoTimeout(100);
        InputStream in = peer.getInputStream();
        byte[] buf = new byte[10];
        readFully(in, buf);
        assertArrayEquals(bytes(10, 9), buf);
        int last = 0;
        for (int i = 0; i < 300 && last != -1; i++) {
            System.gc();
            try {
                last = in.read();
            } catch (SocketTimeoutException e) {
                last = 0;
            }
        }
        assertEquals(-1, last, "the peer of a collected, never-closed socket sees EOF (as the JDK's cleaner gives on TCP)");
        peer.close();
    }

    @Test
    void manyConnectionsAtOnceFromOneJvm() throws Exception {
        int n = 64;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Socket> clients = new ArrayList<>();
        List<Socket> servers = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                clients.add(new Socket(address(), server.getLocalPort()));
                servers.add(server.accept());
                assertEquals(expectedPath(), SoraPath.of(clients.get(i)));
                assertEquals(expectedPath(), SoraPath.of(servers.get(i)));
            }
            List<Future<?>> echoes = new ArrayList<>();
            for (Socket s : servers) {
                echoes.add(pool.submit(() -> {
                    byte[] buf = new byte[64 << 10];
                    readFully(s.getInputStream(), buf);
                    s.getOutputStream().write(buf);
                    return null;
                }));
            }
            for (int i = 0; i < n; i++) {
                byte[] msg = bytes(64 << 10, i);
                clients.get(i).getOutputStream().write(msg);
                byte[] back = new byte[msg.length];
                readFully(clients.get(i).getInputStream(), back);
                assertArrayEquals(msg, back, "connection " + i);
            }
            for (Future<?> f : echoes) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            for (Socket s : clients) {
                s.close();
            }
            for (Socket s : servers) {
                s.close();
            }
        }
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + seed * 13);
        }
        return b;
    }

    static void readFully(InputStream in, byte[] buf) throws IOException {
        int off = 0;
        while (off < buf.length) {
            int n = in.read(buf, off, buf.length - off);
            if (n < 0) {
                throw new IOException("EOF after " + off + " of " + buf.length);
            }
            off += n;
        }
    }

    private static byte[] sendRandom(OutputStream out, int size, long seed) throws Exception {
        Random r = new Random(seed);
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[70_000];
        int sent = 0;
        while (sent < size) {
            int n = Math.min(size - sent, 1 + r.nextInt(chunk.length));
            r.nextBytes(chunk);
            out.write(chunk, 0, n);
            md.update(chunk, 0, n);
            sent += n;
        }
        return md.digest();
    }

    /**
     * Two ends that each write more than a shm ring holds before they read what the other wrote: an echo
     * server answering piece by piece while its client sends a whole 1 MiB message before reading the
     * answer. TCP's buffers (megabytes on loopback) take it; a paired connection's rings hold 64 KiB each
     * way, and both ends waited for each other for ever until the waiting writers moved their bytes to the
     * TCP connection (docs/shm.md, "Buffering"). Every byte arrives, in order, and the connection goes on
     * working after it: a second message, a half-close, the end.
     */
    @Test
    void twoEndsThatEachWriteMoreThanARingHoldsBeforeReadingBothFinish() throws Exception {
        exchangeMoreThanTheRingsHold(false);
    }

    /**
     * A closed paired socket the application keeps holds none of its streams: the JDK caches its socket
     * streams in the socket, and a paired socket's wrap the fast path's (its ring, its mapping and, after a
     * detach, the agent's class loader), so sora drops them as the socket closes, where TCP's would stay
     * (harmlessly: a closed socket hands out no stream). Found in review, 2026-11-29.
     */
    @Test
    void aClosedPairedSocketKeepsNoStream() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse("tcp".equals(expectedPath()), "a TCP socket keeps its JDK streams");
        java.lang.ref.WeakReference<InputStream> in = new java.lang.ref.WeakReference<>(client.getInputStream());
        java.lang.ref.WeakReference<OutputStream> out = new java.lang.ref.WeakReference<>(client.getOutputStream());
        client.close();
        for (int i = 0; i < 5 && (in.get() != null || out.get() != null); i++) System.gc();
        assertNull(in.get(), "the closed socket's input stream is still reachable");
        assertNull(out.get(), "the closed socket's output stream is still reachable");
        assertTrue(client.isClosed());
    }

    /**
     * As {@link #twoEndsThatEachWriteMoreThanARingHoldsBeforeReadingBothFinish}, after a garbage collection
     * between taking the streams and the exchange: the TCP streams a paired socket's streams move to are held
     * for as long as the application's streams are (they were held weakly, and once the JDK's own socket
     * streams wrapped sora's, nothing else held them: the move read "Socket closed").
     */
    @Test
    void theMoveToTcpWorksAfterAGarbageCollection() throws Exception {
        exchangeMoreThanTheRingsHold(true);
    }

    private void exchangeMoreThanTheRingsHold(boolean collectFirst) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(movesFullRingsToTcp(),
                "this path keeps such an exchange in its rings, which hold less than TCP's buffers");
        if (collectFirst) {
            client.getInputStream();
            client.getOutputStream();
            accepted.getInputStream();
            accepted.getOutputStream();
            for (int i = 0; i < 3; i++) System.gc();
        }
        int size = 1 << 20;
        byte[] message = new byte[size];
        new Random(7).nextBytes(message);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Long> echo = pool.submit(() -> {
                InputStream in = accepted.getInputStream();
                OutputStream out = accepted.getOutputStream();
                byte[] buf = new byte[8192];
                long echoed = 0;
                for (int n; (n = in.read(buf)) > 0; echoed += n) out.write(buf, 0, n);
                accepted.shutdownOutput();
                return echoed;
            });
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(30), () -> {
                OutputStream out = client.getOutputStream();
                out.write(message); // all of it before reading anything
                InputStream in = client.getInputStream();
                byte[] back = in.readNBytes(size);
                assertArrayEquals(message, back, "the echo of the large message");
                out.write(new byte[] {9, 8, 7});
                assertArrayEquals(new byte[] {9, 8, 7}, in.readNBytes(3), "a message after it");
                client.shutdownOutput();
                assertEquals(-1, in.read(), "the end, after the server's half-close");
                assertEquals(size + 3L, echo.get(10, TimeUnit.SECONDS), "bytes the server echoed");
            }, "both ends writing more than a ring before reading waited for each other");
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] receive(InputStream in, int size) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[50_000];
        int got = 0;
        while (got < size) {
            int n = in.read(buf, 0, Math.min(buf.length, size - got));
            if (n < 0) {
                throw new IOException("EOF after " + got);
            }
            md.update(buf, 0, n);
            got += n;
        }
        return md.digest();
    }

    /** Waits (bounded) until the pool thread is blocked inside read(): the condition, not a sleep. */
    private static void awaitBlockedInRead(java.util.concurrent.atomic.AtomicReference<Thread> reader)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (reader.get() == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        io.sora.it.Blocked.awaitBlockedIn(reader.get(), "read");
    }
}
