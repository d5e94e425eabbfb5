package io.sora.transport.shm.fuzz;

import io.sora.rules.fuzz.MutationalFuzzer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile bytes at a live listener: mutated frames are written to the rendezvous socket of a real
 * {@link ServerBinding}. Each gets no reply or a NO (or NOTED, when the mutation made a well-formed
 * ANNOUNCE; never an OFFER: none names a real TCP connection),
 * the listener closes each connection (no file descriptor stays behind), and afterwards a genuine
 * connection still pairs: garbage can neither kill the listener thread nor wedge it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RendezvousGarbageTest {
    @TempDir
    Path tmp;

    @Test
    void garbageNeverKillsOrWedgesTheListener() throws Exception {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 100), Tracer.OFF);
        PairingOptions opts = new PairingOptions(4096, 4096, Duration.ofSeconds(5));
        try (ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ServerBinding b = t.listen((InetSocketAddress) ss.getLocalSocketAddress(), k -> new AcceptPolicy.Allow(opts));
            try {
                Path sock = t.rendezvousSocket(ss.getLocalPort());
                long fdsBefore = openFds();
                MutationalFuzzer fuzzer = new MutationalFuzzer(WireFuzzTest.seeds(), List.of("SORA", "\u0001", "\u0004"),
                        MutationalFuzzer.seedFromProperty(), 5000);
                MutationalFuzzer.Report r = fuzzer.run(input -> send(sock, input),
                        MutationalFuzzer.budgetFromProperty(2), 20_000);
                System.out.println("RendezvousGarbageTest: " + r);
                assertTrue(r.executions() > 50, "too few garbage connections to mean anything: " + r);
                long fdsAfter = awaitFdsAtMost(fdsBefore + 2);
                assertTrue(fdsAfter <= fdsBefore + 2, "file descriptors grew from " + fdsBefore + " to " + fdsAfter);
                assertTrue(Thread.getAllStackTraces().keySet().stream()
                        .anyMatch(th -> th.getName().equals("sora-shm-listen-" + ss.getLocalPort()) && th.isAlive()),
                        "the listener thread died");
                genuinePairing(t, ss, b, opts);
            } finally {
                b.close();
            }
        }
    }

    /** Writes the bytes, half-closes, and reads the whole reply (bounded); returns its kind. */
    private static String send(Path sock, byte[] input) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
            ch.write(ByteBuffer.wrap(input));
            ch.shutdownOutput();
            ch.configureBlocking(false);
            ByteBuffer reply = ByteBuffer.allocate(8192);
            try (Selector sel = Selector.open()) {
                ch.register(sel, SelectionKey.OP_READ);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (ch.read(reply) >= 0) {
                    if (System.nanoTime() > deadline) throw new AssertionError("the listener neither replied nor closed within 5 s");
                    sel.select(100);
                    sel.selectedKeys().clear();
                }
            }
            reply.flip();
            if (!reply.hasRemaining()) return "closed";
            assertTrue(reply.remaining() >= 9, "a reply shorter than a frame: " + reply.remaining() + " bytes");
            int type = reply.get(8);
            // NOTED only to what happens to be a well-formed ANNOUNCE (the fuzzer builds some from the
            // seeds' pieces): an announcement promises nothing, it is only noted, and withdrawn when
            // this connection closes. Never an OFFER: nothing here names a real TCP connection.
            if (type == Frames.NOTED && input.length > 8 && input[8] == Frames.ANNOUNCE) return "NOTED";
            assertEquals(Frames.NO, type, "the listener replied to garbage with frame type " + type);
            return "NO";
        }
    }

    private static void genuinePairing(ShmTransport t, ServerSocket ss, ServerBinding b, PairingOptions opts) throws Exception {
        try (Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort()); Socket s = ss.accept()) {
            PairingResult cr = t.connect(new ConnectionKey((InetSocketAddress) c.getLocalSocketAddress(),
                    (InetSocketAddress) c.getRemoteSocketAddress()), opts, HostileOffersTest.NO_HOOKS);
            PairingResult sr = b.awaitPairing(new ConnectionKey((InetSocketAddress) s.getRemoteSocketAddress(),
                    (InetSocketAddress) s.getLocalSocketAddress()), Duration.ofSeconds(5), HostileOffersTest.NO_HOOKS);
            FastConnection client = assertInstanceOf(PairingResult.Paired.class, cr, "after garbage: " + cr).connection();
            FastConnection server = assertInstanceOf(PairingResult.Paired.class, sr, "after garbage: " + sr).connection();
            client.outputStream().write(42);
            assertEquals(42, server.inputStream().read());
            client.close();
            server.close();
        }
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /** The listener closes refused connections on its own thread: give it a moment (bounded). */
    private static long awaitFdsAtMost(long limit) throws IOException, InterruptedException {
        long n = openFds();
        for (int i = 0; i < 100 && n > limit; i++) {
            Thread.sleep(20);
            n = openFds();
        }
        return n;
    }
}
