package io.sora.transport.shm.fuzz;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Completes ShmStreamSemanticsTest's wrap-around test (every start offset of a 64-byte ring with
 * writes of exactly the room left, one byte more, a whole ring, one byte): here a single write
 * larger than the ring starts at every offset of rings of 1, 61 (not a power of two) and 64 bytes,
 * in both directions, while the reader takes it in reads of every size from 1 to ring + 1.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingOffsetSweepTest {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "ring {0}")
    @ValueSource(ints = {1, 61, 64})
    void writesLargerThanTheRingAtEveryOffsetArriveIntact(int ring) throws Exception {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 50), Tracer.OFF);
        PairingOptions opts = new PairingOptions(ring, ring, Duration.ofSeconds(5));
        try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            ServerBinding b = t.listen((InetSocketAddress) ss.getLocalSocketAddress(), k -> new AcceptPolicy.Allow(opts));
            try (Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort()); Socket s = ss.accept()) {
                FastConnection client = assertInstanceOf(PairingResult.Paired.class, t.connect(new ConnectionKey(
                        (InetSocketAddress) c.getLocalSocketAddress(), (InetSocketAddress) c.getRemoteSocketAddress()),
                        opts, HostileOffersTest.NO_HOOKS)).connection();
                FastConnection server = assertInstanceOf(PairingResult.Paired.class, b.awaitPairing(new ConnectionKey(
                        (InetSocketAddress) s.getRemoteSocketAddress(), (InetSocketAddress) s.getLocalSocketAddress()),
                        Duration.ofSeconds(5), HostileOffersTest.NO_HOOKS)).connection();
                sweep(client, server, ring, 1);
                sweep(server, client, ring, 2);
                client.close();
                server.close();
            } finally {
                b.close();
            }
        }
    }

    private static void sweep(FastConnection from, FastConnection to, int ring, long seed) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int start = 0; start < ring; start++) {
            // the stream position is a multiple of the ring here: move it to offset 'start'
            byte[] pad = new byte[start];
            from.outputStream().write(pad);
            read(to.inputStream(), start, 1, ring);
            for (int extra : new int[] {1, ring, ring + 3}) {
                byte[] data = new byte[ring + extra];
                rnd.nextBytes(data);
                CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
                    try {
                        return read(to.inputStream(), data.length, 1 + extra % (ring + 1), ring);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                from.outputStream().write(data);
                assertArrayEquals(data, got.get(20, TimeUnit.SECONDS), "ring " + ring + " offset " + start + " length " + data.length);
            }
            // back to a multiple of the ring: the three blocks were 3 rings + 1 + ring + ring + 3 bytes
            int misalign = (int) ((start + 3L * ring + 1 + ring + ring + 3) % ring);
            int back = (ring - misalign) % ring;
            from.outputStream().write(new byte[back]);
            read(to.inputStream(), back, 1, ring);
        }
    }

    /** Reads n bytes in reads of sizes cycling from {@code first} through 1..ring+1. */
    private static byte[] read(InputStream in, int n, int first, int ring) throws IOException {
        byte[] out = new byte[n];
        int size = first;
        int got = 0;
        while (got < n) {
            int r = in.read(out, got, Math.min(size, n - got));
            if (r < 0) throw new IOException("EOF after " + got + " of " + n);
            got += r;
            size = size % (ring + 1) + 1;
        }
        return out;
    }
}
