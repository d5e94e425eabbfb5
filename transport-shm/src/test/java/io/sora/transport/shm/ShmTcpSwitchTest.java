package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.RingConnection;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A direction of a shm connection moves to its TCP connection when both ends wait on full rings
 * (docs/shm.md, "Buffering"), with the pair's own loopback TCP connection as the sockets' streams, as the
 * agent gives them: 4 KiB rings, an echo answering piece by piece, a client writing 256 KiB first.
 */
class ShmTcpSwitchTest {
    @TempDir
    Path tmp;

    private static void asSockets(ShmFixture.Pair p) throws java.io.IOException {
        RingConnection c = (RingConnection) p.client();
        RingConnection s = (RingConnection) p.server();
        c.inputStream().offerTcpFollow();
        s.inputStream().offerTcpFollow();
        c.inputStream().tcpFallback(p.clientTcp().getInputStream());
        c.outputStream().tcpFallback(p.clientTcp().getOutputStream());
        s.inputStream().tcpFallback(p.serverTcp().getInputStream());
        s.outputStream().tcpFallback(p.serverTcp().getOutputStream());
    }

    @Test
    void bothEndsWritingMoreThanTheirRingsBeforeReadingMoveAndEveryByteArrives() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            ShmFixture.Pair p = fx.pair();
            asSockets(p);
            byte[] message = new byte[256 * 1024];
            new Random(3).nextBytes(message);
            CompletableFuture<Long> echo = CompletableFuture.supplyAsync(() -> {
                try {
                    InputStream in = p.server().inputStream();
                    OutputStream out = p.server().outputStream();
                    byte[] buf = new byte[1024];
                    long n = 0;
                    for (int r; n < message.length && (r = in.read(buf)) > 0; n += r) out.write(buf, 0, r);
                    return n;
                } catch (java.io.IOException e) {
                    throw new RuntimeException(e);
                }
            });
            p.client().outputStream().write(message);
            byte[] back = p.client().inputStream().readNBytes(message.length);
            assertArrayEquals(message, back, "the echo");
            assertEquals(message.length, echo.get(30, TimeUnit.SECONDS));
            RingConnection c = (RingConnection) p.client();
            RingConnection s = (RingConnection) p.server();
            assertTrue(c.outputStream().onTcp() || s.outputStream().onTcp(), "no direction moved: the test proved nothing");
            // and on: a message each way after the move
            p.client().outputStream().write(new byte[] {1, 2});
            assertArrayEquals(new byte[] {1, 2}, p.server().inputStream().readNBytes(2));
            p.server().outputStream().write(new byte[] {3});
            assertEquals(3, p.client().inputStream().read());
        }
    }

    /**
     * A writer blocked on a full ring whose peer neither reads nor writes (a consumer busy elsewhere) does not
     * move, and sleeps until it is woken: it woke every 10 ms before (found in review, 2026-11-29).
     */
    @Test
    void aWriterWhosePeerOnlyStopsReadingStaysOnTheRingAndSleepsUntilWoken() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            ShmFixture.Pair p = fx.pair();
            asSockets(p);
            byte[] message = new byte[64 * 1024];
            new Random(5).nextBytes(message);
            Thread writer = new Thread(() -> {
                try {
                    p.client().outputStream().write(message);
                } catch (java.io.IOException e) {
                    throw new RuntimeException(e);
                }
            }, "writer");
            writer.start();
            ShmMedium m = (ShmMedium) ((RingConnection) p.client()).medium();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (m.sleeps()[2] + m.sleeps()[3] == 0 && System.nanoTime() < deadline) Thread.onSpinWait();
            assertTrue(m.sleeps()[2] + m.sleeps()[3] > 0, "the writer never slept: the test proved nothing");
            long before = m.sleeps()[2] + m.sleeps()[3];
            Thread.sleep(250); // time passing is what is under test: ten-millisecond wake-ups would show here
            long woke = m.sleeps()[2] + m.sleeps()[3] - before;
            assertTrue(woke <= 2, "the blocked writer woke " + woke + " times in 250 ms with nothing to do");
            byte[] got = p.server().inputStream().readNBytes(message.length);
            writer.join(10_000);
            assertArrayEquals(message, got);
            assertFalse(((RingConnection) p.client()).outputStream().onTcp(), "moved although the peer never wrote");
        }
    }
    /**
     * Two writers blocked on full rings where neither end follows a move (channel ends, say): neither can
     * move, so neither wakes every 10 ms to look (found in review, 2026-11-29), and both sleep until woken.
     */
    @Test
    void writersThatCannotMoveSleepUntilWoken() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            ShmFixture.Pair p = fx.pair();
            RingConnection c = (RingConnection) p.client();
            RingConnection s = (RingConnection) p.server();
            c.outputStream().tcpFallback(p.clientTcp().getOutputStream()); // could write by TCP, but no end follows
            s.outputStream().tcpFallback(p.serverTcp().getOutputStream());
            byte[] message = new byte[16 * 1024];
            Thread[] writers = new Thread[2];
            RingConnection[] ends = {c, s};
            for (int i = 0; i < 2; i++) {
                RingConnection end = ends[i];
                writers[i] = new Thread(() -> {
                    try {
                        end.outputStream().write(message);
                    } catch (java.io.IOException e) {
                        // closed at the end of the test
                    }
                }, "writer-" + i);
                writers[i].start();
            }
            ShmMedium mc = (ShmMedium) c.medium();
            ShmMedium ms = (ShmMedium) s.medium();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((mc.sleeps()[2] + mc.sleeps()[3] == 0 || ms.sleeps()[2] + ms.sleeps()[3] == 0) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            long before = mc.sleeps()[2] + mc.sleeps()[3] + ms.sleeps()[2] + ms.sleeps()[3];
            Thread.sleep(250); // time passing is what is under test: ten-millisecond wake-ups would show here
            long woke = mc.sleeps()[2] + mc.sleeps()[3] + ms.sleeps()[2] + ms.sleeps()[3] - before;
            assertTrue(woke <= 3, "two writers that cannot move woke " + woke + " times in 250 ms");
            assertFalse(c.outputStream().onTcp() || s.outputStream().onTcp(), "moved to an end that does not follow");
            c.inputStream().readNBytes(message.length); // let both finish
            s.inputStream().readNBytes(message.length);
            for (Thread w : writers) w.join(10_000);
        }
    }
}
