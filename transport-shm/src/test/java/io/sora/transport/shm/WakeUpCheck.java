package io.sora.transport.shm;

import io.sora.transport.FastConnection;
import io.sora.transport.Futex;
import io.sora.transport.RingConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * No lost wake-up: with busy-waiting off, every wait of both ends sleeps, so a ping-pong of one-byte
 * messages puts the reader to sleep on every message and a stream through a 64-byte ring puts the
 * writer to sleep for credits thousands of times. A wake-up lost anywhere leaves a thread asleep: the
 * reads carry an SO_TIMEOUT, so that shows as a {@code SocketTimeoutException}, never a hang. Run in
 * the test JVM by {@link ShmWakeUpTest} and, pinned to one CPU with {@code taskset}, as a child
 * process through {@link #main} (exit 0 and a line {@code OK ...}).
 */
final class WakeUpCheck {
    static final int ROUND_TRIPS = 3000;
    static final int STREAM_BYTES = 1 << 20;

    private WakeUpCheck() {
    }

    /** Returns the four sleep counters of both ends added up ({@link ShmMedium#sleeps()}). */
    static long[] run(Path dir, boolean futex) throws Exception {
        try (ShmFixture fx = new ShmFixture(dir, 64, 64, new ShmSettings(dir, 0, futex))) {
            ShmFixture.Pair p = fx.pair();
            p.clientHooks().soTimeout = 10_000;
            p.serverHooks().soTimeout = 10_000;
            pingPong(p.client(), p.server());
            stream(p.client(), p.server());
            long[] total = new long[4];
            for (FastConnection c : new FastConnection[] {p.client(), p.server()}) {
                long[] s = ((ShmMedium) ((RingConnection) c).medium()).sleeps();
                for (int i = 0; i < 4; i++) total[i] += s[i];
            }
            return total;
        }
    }

    private static void pingPong(FastConnection client, FastConnection server) throws Exception {
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            try {
                InputStream in = server.inputStream();
                OutputStream out = server.outputStream();
                for (int i = 0; i < ROUND_TRIPS; i++) {
                    int b = in.read();
                    if (b < 0) throw new IOException("EOF at round trip " + i);
                    out.write(b ^ 0x5a);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        for (int i = 0; i < ROUND_TRIPS; i++) {
            client.outputStream().write(i & 0xff);
            int back = client.inputStream().read();
            if (back != ((i & 0xff) ^ 0x5a)) throw new AssertionError("round trip " + i + ": got " + back);
        }
        echo.get(30, TimeUnit.SECONDS);
    }

    private static void stream(FastConnection client, FastConnection server) throws Exception {
        byte[] data = new byte[STREAM_BYTES];
        new Random(7).nextBytes(data);
        CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
            try {
                return ShmStreamSemanticsTest.readExactly(server.inputStream(), data.length);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        Random sizes = new Random(11);
        for (int off = 0; off < data.length; ) {
            int n = Math.min(data.length - off, 1 + sizes.nextInt(200));
            client.outputStream().write(data, off, n);
            off += n;
        }
        if (!Arrays.equals(data, got.get(30, TimeUnit.SECONDS))) throw new AssertionError("stream bytes differ");
    }

    /** {@code WakeUpCheck DIR}: both mechanisms (futex where available, doorbells), prints the counters. */
    public static void main(String[] args) throws Exception {
        Path dir = Files.createDirectories(Path.of(args[0]));
        long[] f = run(dir, true);
        long[] b = run(dir, false);
        System.out.println("OK futex=" + Futex.isAvailable() + " futexMode=" + Arrays.toString(f) + " bellMode=" + Arrays.toString(b));
    }
}
