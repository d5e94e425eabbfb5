package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.RingConnection;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The move to TCP over RDMA (docs/rdma.md, "Buffering"), two media over the in-memory verbs with a loopback
 * TCP connection as the sockets' streams: the peer's offer to follow, a writer's stall and the switch go in
 * CTRL messages after the data, and the reader switches at its producer cursor. 4 KiB rings, an echo
 * answering 1 KiB at a time, a client writing 256 KiB before it reads.
 */
class RdmaTcpSwitchTest {
    private RdmaMediumTest.Link link;
    private ServerSocket ss;
    private Socket c;
    private Socket s;

    @AfterEach
    void tearDown() throws Exception {
        if (link != null) link.abort();
        for (AutoCloseable r : new AutoCloseable[] {c, s, ss}) if (r != null) r.close();
    }

    private void open() throws Exception {
        link = new RdmaMediumTest.Link();
        ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        c = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort());
        s = ss.accept();
        link.ca.inputStream().offerTcpFollow();
        link.cb.inputStream().offerTcpFollow();
        link.ca.inputStream().tcpFallback(c.getInputStream());
        link.ca.outputStream().tcpFallback(c.getOutputStream());
        link.cb.inputStream().tcpFallback(s.getInputStream());
        link.cb.outputStream().tcpFallback(s.getOutputStream());
    }

    /**
     * The client writes {@code message} whole, in writes of {@code writes} bytes, before it reads the echo;
     * the server echoes what each read of up to {@code reads} bytes returns. Returns once every byte came back.
     */
    private void echoWrittenWholeFirst(byte[] message, int writes, int reads) throws Exception {
        RingConnection client = link.ca;
        RingConnection server = link.cb;
        CompletableFuture<Long> echo = CompletableFuture.supplyAsync(() -> {
            try {
                InputStream in = server.inputStream();
                OutputStream out = server.outputStream();
                byte[] buf = new byte[reads];
                long n = 0;
                for (int r; n < message.length && (r = in.read(buf)) > 0; n += r) out.write(buf, 0, r);
                return n;
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        });
        byte[] back = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(30), () -> {
            for (int off = 0; off < message.length; off += writes) client.outputStream().write(message, off, Math.min(writes, message.length - off));
            return client.inputStream().readNBytes(message.length);
        }, "both ends writing more than a ring before reading waited for each other");
        assertArrayEquals(message, back, "the echo");
        assertEquals(message.length, echo.get(30, TimeUnit.SECONDS));
    }

    @Test
    void bothEndsWritingMoreThanTheirRingsBeforeReadingMoveAndEveryByteArrives() throws Exception {
        open();
        byte[] message = new byte[256 * 1024];
        new Random(11).nextBytes(message);
        echoWrittenWholeFirst(message, message.length, 1024);
        RingConnection client = link.ca;
        RingConnection server = link.cb;
        assertTrue(client.outputStream().onTcp() || server.outputStream().onTcp(), "no direction moved: the test proved nothing");
        client.outputStream().write(new byte[] {1, 2});
        assertArrayEquals(new byte[] {1, 2}, server.inputStream().readNBytes(2));
        server.outputStream().write(new byte[] {3});
        assertEquals(3, client.inputStream().read());
    }

    /**
     * The same with many small writes (16 bytes each): every write takes one of the peer's receives, so the
     * writer runs out of slot credits (112) before its 4 KiB ring fills and its last bytes wait in its shadow ring; its
     * stall must reach the peer all the same (a CTRL with the stall goes whatever data waits), or neither moves.
     */
    @Test
    void smallWritesThatRunOutOfSlotCreditsStillMove() throws Exception {
        open();
        byte[] message = new byte[64 * 1024];
        new Random(17).nextBytes(message);
        echoWrittenWholeFirst(message, 16, 16);
        assertEquals(0, link.va.rnrCount() + link.vb.rnrCount(), "a message arrived where no receive was posted");
    }

    /** A writer whose peer stops reading, and writes nothing, stays on the ring (a slow consumer is no deadlock). */
    @Test
    void aWriterWhosePeerOnlyStopsReadingStaysOnTheRing() throws Exception {
        open();
        byte[] message = new byte[64 * 1024];
        new Random(13).nextBytes(message);
        Thread writer = new Thread(() -> {
            try {
                link.ca.outputStream().write(message);
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }, "writer");
        writer.start();
        RdmaMediumTest.await("the writer blocks", () -> writer.getState() == Thread.State.TIMED_WAITING
                || writer.getState() == Thread.State.WAITING);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        while (System.nanoTime() < deadline) Thread.onSpinWait(); // ten switch waits: time passing is what is tested
        assertFalse(link.ca.outputStream().onTcp(), "moved although the peer never wrote");
        byte[] got = link.cb.inputStream().readNBytes(message.length);
        writer.join(10_000);
        assertArrayEquals(message, got);
        assertFalse(link.ca.outputStream().onTcp());
    }
}
