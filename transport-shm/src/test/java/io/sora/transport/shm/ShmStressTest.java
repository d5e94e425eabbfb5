package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Volume in both directions at once; the digests at both ends must agree. */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmStressTest {
    static final long TOTAL = 64L << 20;

    @TempDir
    Path tmp;

    static byte[] send(OutputStream out, long seed) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] buf = new byte[200_000];
        rnd.nextBytes(buf);
        long left = TOTAL;
        while (left > 0) {
            int n = (int) Math.min(left, 1 + rnd.nextInt(buf.length));
            int off = rnd.nextInt(buf.length - n + 1);
            buf[off] ^= (byte) left; // vary the content between writes
            out.write(buf, off, n);
            sha.update(buf, off, n);
            left -= n;
        }
        return sha.digest();
    }

    static byte[] receive(InputStream in, long seed) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] buf = new byte[150_000];
        long got = 0;
        while (got < TOTAL) {
            int n = in.read(buf, 0, 1 + rnd.nextInt(buf.length));
            if (n < 0) throw new AssertionError("EOF after " + got);
            sha.update(buf, 0, n);
            got += n;
        }
        assertEquals(TOTAL, got);
        return sha.digest();
    }

    @Test
    void sixtyFourMebibytesEachWayAtOnceArriveIntact() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 65536, 45056)) {
            ShmFixture.Pair p = fx.pair();
            // Own threads: the common pool may have a single worker, and these tasks block on each other.
            ExecutorService pool = Executors.newFixedThreadPool(3, r -> {
                Thread t = new Thread(r, "stress");
                t.setDaemon(true);
                return t;
            });
            try {
                Future<byte[]> c2s = pool.submit(() -> send(p.client().outputStream(), 1));
                Future<byte[]> s2c = pool.submit(() -> send(p.server().outputStream(), 2));
                Future<byte[]> atServer = pool.submit(() -> receive(p.server().inputStream(), 3));
                byte[] atClient = receive(p.client().inputStream(), 4);
                assertArrayEquals(c2s.get(100, TimeUnit.SECONDS), atServer.get(100, TimeUnit.SECONDS));
                assertArrayEquals(s2c.get(100, TimeUnit.SECONDS), atClient);
            } finally {
                pool.shutdownNow();
            }
            assertEquals(TOTAL, p.client().bytesSent());
            assertEquals(TOTAL, p.server().bytesReceived());
        }
    }
}
