package io.sora.transport.shm.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process that is not the paired peer cannot make a client join it: a fake listener (same user,
 * as only the same user can reach the private directory) answers HELLO with hostile OFFERs, and the
 * real client must fall back to TCP without ever sending COMMIT, whatever the offer names: a replayed
 * OFFER of a finished pairing, a replayed secret, a path outside the directory, a symbolic link, a
 * directory, a file of the wrong size or magic, absurd ring sizes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostileOffersTest {
    static final int RING = 4096;
    static final long MAGIC = 0x534F52412D53484DL;
    static final SocketHooks NO_HOOKS = new SocketHooks() {
        @Override
        public int soTimeoutMillis() {
            return 0;
        }

        @Override
        public void closeSocket() {
        }
    };

    @TempDir
    Path tmp;
    ShmTransport transport;
    Path dir;

    @BeforeEach
    void setUp() {
        transport = new ShmTransport(new ShmSettings(tmp, 100), Tracer.OFF);
        assertTrue(transport.initialize(), "shm must be usable in " + tmp);
        dir = transport.directory();
    }

    /** Runs a fake listener on {@code port} that answers the HELLO with {@code offer}; returns the client's result and what the fake saw after. */
    private String[] offerTo(int port, byte[] offer) throws Exception {
        Path sock = transport.rendezvousSocket(port);
        try (ServerSocketChannel fake = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            fake.bind(UnixDomainSocketAddress.of(sock));
            CompletableFuture<String> seen = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel ch = fake.accept()) {
                    Frames.Frame hello = Frames.read(ch);
                    if (hello == null || hello.type() != Frames.HELLO) return "no HELLO";
                    ch.write(ByteBuffer.wrap(offer));
                    Frames.Frame next = Frames.read(ch);
                    return next == null ? "EOF" : "frame type " + next.type();
                } catch (IOException e) {
                    return e.toString();
                }
            });
            ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            PairingResult r = transport.connect(key, new PairingOptions(RING, RING, Duration.ofSeconds(5)), NO_HOOKS);
            String reason = assertInstanceOf(PairingResult.Fallback.class, r, "a hostile offer was accepted").reason();
            return new String[] {reason, seen.get(20, TimeUnit.SECONDS)};
        } finally {
            Files.deleteIfExists(sock);
        }
    }

    private void assertRefused(String[] outcome, String expectedInReason) {
        assertTrue(outcome[0].contains(expectedInReason), "reason '" + outcome[0] + "' should contain '" + expectedInReason + "'");
        assertEquals("EOF", outcome[1], "the client must close without COMMIT");
    }

    /** The layout version this build writes and accepts (Segment.VERSION, package-private there). */
    private static int segmentVersion() {
        try {
            java.lang.reflect.Field f = Class.forName("io.sora.transport.shm.Segment").getDeclaredField("VERSION");
            f.setAccessible(true);
            return f.getInt(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** A segment file laid out as docs/shm.md says, with the given secret. */
    private static void writeSegment(Path p, int c2s, int s2c, byte[] secret, long magic) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer h = ByteBuffer.allocate(4096 + c2s + s2c).order(ByteOrder.nativeOrder());
            h.putLong(0, magic).putInt(8, segmentVersion()).putInt(12, 4096).putInt(16, c2s).putInt(20, s2c).put(24, secret);
            ch.write(h);
        }
    }

    /** Runs one genuine pairing as a raw client of a real listener and returns the OFFER frame it got. */
    private byte[][] genuineOffer() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            ServerBinding b = transport.listen((InetSocketAddress) ss.getLocalSocketAddress(),
                    k -> new AcceptPolicy.Allow(new PairingOptions(RING, RING, Duration.ofSeconds(5))));
            try (Socket c = new Socket(ss.getInetAddress(), ss.getLocalPort()); Socket s = ss.accept();
                 SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(transport.rendezvousSocket(ss.getLocalPort())))) {
                ch.write(ByteBuffer.wrap(Frames.hello((InetSocketAddress) c.getLocalSocketAddress(),
                        (InetSocketAddress) c.getRemoteSocketAddress(), RING)));
                Frames.Frame offer = Frames.read(ch);
                assertEquals(Frames.OFFER, offer.type(), "the genuine listener must offer");
                ch.write(ByteBuffer.wrap(Frames.commit()));
                PairingResult r = b.awaitPairing(new ConnectionKey((InetSocketAddress) s.getRemoteSocketAddress(),
                        (InetSocketAddress) s.getLocalSocketAddress()), Duration.ofSeconds(5), NO_HOOKS);
                assertInstanceOf(PairingResult.Paired.class, r).connection().close();
                assertTrue(Files.notExists(Path.of(offer.string())), "the segment is unlinked at COMMIT");
                byte[] raw = Frames.frame(Frames.OFFER, offer.body());
                return new byte[][] {raw, offer.string().getBytes(java.nio.charset.StandardCharsets.UTF_8), offer.secret()};
            } finally {
                b.close();
            }
        }
    }

    @Test
    void aReplayedOfferOfAFinishedPairingIsRefused() throws Exception {
        byte[][] genuine = genuineOffer();
        assertRefused(offerTo(45001, genuine[0]), "shm segment refused: ");
    }

    @Test
    void aReplayedSecretOnAFreshSegmentIsRefused() throws Exception {
        byte[][] genuine = genuineOffer();
        Path seg = dir.resolve("seg-" + ProcessHandle.current().pid() + "-replay");
        byte[] fresh = new byte[16];
        fresh[15] = 9;
        writeSegment(seg, RING, RING, fresh, MAGIC);
        assertRefused(offerTo(45002, Frames.offer(seg.toString(), genuine[2], RING, RING, 1)),
                "secret does not match the offer");
    }

    @Test
    void offersOutsideThePrivateDirectoryOrThroughLinksAreRefused() throws Exception {
        byte[] secret = new byte[16];
        Path outside = tmp.resolve("seg-outside");
        writeSegment(outside, RING, RING, secret, MAGIC);
        assertRefused(offerTo(45003, Frames.offer(outside.toString(), secret, RING, RING, 1)), "is outside");
        Path dotdot = dir.resolve("..").resolve(dir.getFileName()).resolve("seg-dotdot");
        assertRefused(offerTo(45004, Frames.offer(dotdot.toString(), secret, RING, RING, 1)), "is outside");
        Path link = dir.resolve("seg-link");
        Files.createSymbolicLink(link, outside);
        assertRefused(offerTo(45005, Frames.offer(link.toString(), secret, RING, RING, 1)), "shm segment refused: ");
    }

    @Test
    void offersOfFilesThatAreNotSegmentsAreRefused() throws Exception {
        byte[] secret = new byte[16];
        Path directory = Files.createDirectory(dir.resolve("seg-a-directory"));
        assertRefused(offerTo(45006, Frames.offer(directory.toString(), secret, RING, RING, 1)), "shm segment refused: ");
        Path small = dir.resolve("seg-small");
        Files.write(small, new byte[100]);
        assertRefused(offerTo(45007, Frames.offer(small.toString(), secret, RING, RING, 1)), "has 100 bytes");
        Path magic = dir.resolve("seg-magic");
        writeSegment(magic, RING, RING, secret, 0x1122334455667788L);
        assertRefused(offerTo(45008, Frames.offer(magic.toString(), secret, RING, RING, 1)), "bad magic");
        Path missing = dir.resolve("seg-never-created");
        assertRefused(offerTo(45009, Frames.offer(missing.toString(), secret, RING, RING, 1)), "shm segment refused: ");
    }

    @Test
    void absurdRingSizesAreRefused() throws Exception {
        byte[] secret = new byte[16];
        Path seg = dir.resolve("seg-sizes");
        writeSegment(seg, RING, RING, secret, MAGIC);
        assertRefused(offerTo(45010, Frames.offer(seg.toString(), secret, RING, RING * 2, 1)), "asked for " + RING);
        assertRefused(offerTo(45011, Frames.offer(seg.toString(), secret, 0, RING, 1)), "ring size must be between 1 and");
        assertRefused(offerTo(45012, Frames.offer(seg.toString(), secret, Integer.MAX_VALUE, RING, 1)), "ring size must be between 1 and");
        assertRefused(offerTo(45013, Frames.offer(seg.toString(), secret, -1, RING, 1)), "ring size must be between 1 and");
    }

    @Test
    void garbageInsteadOfAnOfferIsRefused() throws Exception {
        assertRefused(offerTo(45014, new byte[] {0, 9, 'S', 'O', 'R', 'A', 0, 1, 4, 0, 0}), "shm pairing failed: ");
        assertRefused(offerTo(45015, Frames.frame(Frames.COMMIT, new byte[0])), "unexpected pairing reply");
        assertRefused(offerTo(45016, Frames.no("go away")), "go away");
    }

    @Test
    void aBareSegmentNameIsRefusedWithAReasonNamingIt() throws Exception {
        String[] outcome = offerTo(45017, Frames.offer("seg-1-bare", new byte[16], RING, RING, 1));
        assertRefused(outcome, "seg-1-bare");
    }
}
