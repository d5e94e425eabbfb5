package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.RingConnection;
import io.sora.transport.RingInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes of 16 KiB and more are published in parts as they are copied in ({@code ShmMedium.publishStep}),
 * and a read that got a part takes the rest of that write ({@code RingInputStream.more}). Every byte must
 * arrive once and in order whatever the reader's buffer, the write's size against the ring (a ring whose
 * size is not a power of two, one that is), its wrap-around, the reader's kind (array, heap or direct
 * buffer, waiting or not), and the writer's close right after its last write.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmPartsPublishTest {
    @TempDir
    Path tmp;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private ShmFixture fx;

    @AfterEach
    void close() throws Exception {
        pool.shutdownNow();
        if (fx != null) fx.close();
    }

    private static final int[] WRITES = {16 << 10, (16 << 10) + 1, 40_000, 45_055, 65_536, 100_003, 1 << 20};

    @Test
    void longWritesArriveWholeAndInOrderIntoEveryKindOfRead() throws Exception {
        for (int ring : new int[] {45_056, 65_536}) {
            fx = new ShmFixture(java.nio.file.Files.createDirectories(tmp.resolve("r" + ring)), ring, ring);
            int reader = 0;
            for (int bufSize : new int[] {1, 1000, 8192, 65_536, 300_000}) {
                for (int kind = 0; kind < 3; kind++) {
                    ShmFixture.Pair p = fx.pair();
                    byte[] data = data(WRITES, ring * 31L + bufSize * 7L + kind);
                    Future<?> writing = pool.submit(() -> {
                        OutputStream out = p.client().outputStream();
                        int off = 0;
                        for (int w : WRITES) {
                            out.write(data, off, w);
                            off += w;
                        }
                        p.client().close(); // at once: the reader drains every part, then sees the end
                        return null;
                    });
                    byte[] got = readAll((RingConnection) p.server(), bufSize, kind);
                    writing.get(60, TimeUnit.SECONDS);
                    assertEquals(data.length, got.length, "ring " + ring + ", reads of " + bufSize + ", kind " + kind);
                    assertArrayEquals(data, got, "ring " + ring + ", reads of " + bufSize + ", kind " + kind);
                    p.server().close();
                    reader++;
                }
            }
            assertEquals(15, reader);
            fx.close();
            fx = null;
        }
    }

    /** A reader that sleeps when the write comes (the write's end wakes it, not its parts). */
    @Test
    void aSleepingReaderIsWokenByALongWrite() throws Exception {
        fx = new ShmFixture(tmp, 65_536, 65_536);
        ShmFixture.Pair p = fx.pair();
        byte[] data = data(new int[] {60_000}, 5);
        Object[] started = ShmStreamSemanticsTest.start("reader", () -> ShmStreamSemanticsTest.readExactly(p.server().inputStream(), data.length));
        ShmStreamSemanticsTest.awaitParked((Thread) started[0]);
        p.client().outputStream().write(data);
        @SuppressWarnings("unchecked")
        java.util.concurrent.CompletableFuture<byte[]> f = (java.util.concurrent.CompletableFuture<byte[]>) started[1];
        assertArrayEquals(data, f.get(30, TimeUnit.SECONDS));
    }

    private static byte[] data(int[] writes, long seed) {
        int n = 0;
        for (int w : writes) n += w;
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Reads to the end: kind 0 arrays and 1 heap buffers (waiting reads), 2 direct buffers (non-blocking reads). */
    private static byte[] readAll(RingConnection c, int bufSize, int kind) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        RingInputStream in = (RingInputStream) c.inputStream();
        byte[] arr = new byte[bufSize];
        ByteBuffer bb = kind == 2 ? ByteBuffer.allocateDirect(bufSize) : ByteBuffer.allocate(bufSize);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            assertTrue(System.nanoTime() - deadline < 0, "the reads never saw the end");
            int r;
            if (kind == 0) {
                r = ((InputStream) in).read(arr, 0, bufSize);
                if (r > 0) all.write(arr, 0, r);
            } else {
                bb.clear();
                r = kind == 1 ? in.read(bb, 0) : in.readNow(bb);
                if (r > 0) {
                    bb.flip();
                    byte[] part = new byte[r];
                    bb.get(part);
                    all.write(part);
                } else if (r == 0) {
                    Thread.onSpinWait();
                }
            }
            if (r < 0) return all.toByteArray();
        }
    }
}
