package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Hook;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The pairing protocol: every way it can end, and what it leaves on disk. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmPairingTest {
    @TempDir
    Path tmp;

    static Wire.Message readFrame(SocketChannel ch) throws IOException {
        ByteBuffer acc = ByteBuffer.allocate(Wire.MAX_FRAME);
        for (int i = 0; i < 10_000; i++) {
            Wire.Message m = Wire.tryDecode(acc);
            if (m != null) return m;
            if (ch.read(acc) < 0) throw new IOException("EOF");
        }
        throw new IOException("no frame");
    }

    static SocketChannel rendezvous(ShmTransport t, int port) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(t.directory().resolve(ShmDirectory.socketName(port))));
        return ch;
    }

    static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().startsWith("seg-")).toList();
        }
    }

    @Test
    void noListenerFallsBackAtOnce() {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 0), new RecordingTracer());
        ConnectionKey key = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40000), new InetSocketAddress("127.0.0.1", 1));
        PairingResult r = t.connect(key, PairingOptions.DEFAULT, new TestHooks());
        PairingResult.Fallback f = assertInstanceOf(PairingResult.Fallback.class, r);
        assertEquals("no sora listener at " + t.directory().resolve(ShmDirectory.socketName(1)), f.reason());
    }

    @Test
    void policyRefusalIsTheClientsFallbackReasonAndTheServerStaysOnTcp() throws Exception {
        String why = "client 127.0.0.1 not in accept list (server.conf:3)";
        try (ShmFixture fx = new ShmFixture(tmp, 4096, key -> new AcceptPolicy.Refuse(why))) {
            Socket[] t = fx.tcp();
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks());
            assertEquals(why, assertInstanceOf(PairingResult.Fallback.class, c).reason());
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), Duration.ofMillis(30), new TestHooks());
            assertEquals(why, assertInstanceOf(PairingResult.Fallback.class, s).reason());
        }
    }

    @Test
    void aRequestAfterAcceptGaveUpIsRefusedSoBothEndsAgreeOnTcp() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), Duration.ofMillis(10), new TestHooks());
            assertInstanceOf(PairingResult.Fallback.class, s);
            PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks());
            String reason = assertInstanceOf(PairingResult.Fallback.class, c).reason();
            assertTrue(reason.startsWith("server already accepted on TCP (pairing request arrived after "), reason);
        }
    }

    @Test
    void aRequestNamingAnotherHostsServerOnThisPortIsRefused() throws Exception {
        // a client whose rule names a remote host that uses the same port: its TCP connection never
        // reaches this listener, so a pairing would swallow its bytes
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            int port = fx.serverSocket.getLocalPort();
            InetAddress remote = InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 7});
            ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000),
                    new InetSocketAddress(remote, port));
            assertInstanceOf(PairingResult.Fallback.class, fx.transport.connect(key, fx.clientOptions(), new TestHooks()));
            // and a client that sends it anyway, bypassing its own check, is refused by a listener bound
            // to the wildcard address (one bound to an address refuses every other address anyway)
            int other;
            try (ServerSocket free = new ServerSocket(0)) {
                other = free.getLocalPort();
            }
            ServerBinding wildcard = fx.transport.listen(new InetSocketAddress(other),
                    k -> new AcceptPolicy.Allow(new PairingOptions(4096, 4096, ShmFixture.WAIT)));
            try (SocketChannel ch = rendezvous(fx.transport, other)) {
                ConnectionKey elsewhere = new ConnectionKey(key.client(), new InetSocketAddress(remote, other));
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(elsewhere, 128)));
                Wire.No no = assertInstanceOf(Wire.No.class, readFrame(ch));
                assertTrue(no.reason().startsWith("server address 192.0.2.7 of "), no.reason());
            } finally {
                wildcard.close();
            }
            assertEquals(List.of(), segments(fx.transport.directory()));
        }
    }

    @Test
    void aKeyWhoseClientIsNotOnThisHostIsRefused() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            // 192.0.2.1: TEST-NET-1, never an address of this host
            ConnectionKey bogus = new ConnectionKey(new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 1}), 1),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), fx.serverSocket.getLocalPort()));
            PairingResult c = fx.transport.connect(bogus, fx.clientOptions(), new TestHooks());
            String reason = assertInstanceOf(PairingResult.Fallback.class, c).reason();
            assertTrue(reason.startsWith("client address 192.0.2.1 of /192.0.2.1:1->"), reason);
            assertEquals(List.of(), segments(fx.transport.directory()));
        }
    }

    @Test
    void aSegmentWhoseSecretDiffersFromTheOfferIsRefusedByTheClient() throws Exception {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 0), new RecordingTracer());
        assertTrue(t.initialize());
        int port = 45678;
        Path sock = t.directory().resolve(ShmDirectory.socketName(port));
        try (ServerSocketChannel fake = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            fake.bind(UnixDomainSocketAddress.of(sock));
            CompletableFuture<String> server = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel ch = fake.accept()) {
                    Wire.Hello hello = (Wire.Hello) readFrame(ch);
                    Path seg = new ShmDirectory(tmp).newSegmentPath();
                    byte[] real = new byte[16];
                    byte[] claimed = new byte[16];
                    claimed[0] = 1;
                    Segment.create(seg, 4096, hello.receiveRing(), real);
                    ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Offer(seg.toString(), claimed, 4096, hello.receiveRing(), 1)));
                    int n = ch.read(ByteBuffer.allocate(64));
                    Files.delete(seg);
                    return n < 0 ? "EOF" : "got " + n + " bytes";
                } catch (IOException e) {
                    return e.toString();
                }
            });
            ConnectionKey key = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40000), new InetSocketAddress("127.0.0.1", port));
            PairingResult r = t.connect(key, new PairingOptions(4096, 4096, Duration.ofSeconds(5)), new TestHooks());
            String reason = assertInstanceOf(PairingResult.Fallback.class, r).reason();
            assertTrue(reason.startsWith("shm segment refused: ") && reason.endsWith("secret does not match the offer"), reason);
            assertEquals("EOF", server.get(10, TimeUnit.SECONDS), "the client must abort, never COMMIT");
        }
    }

    @Test
    void theSegmentIsPrivateAndGoneOnceBothSidesMappedIt() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Path dir = fx.transport.directory();
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
            int port = fx.serverSocket.getLocalPort();
            assertEquals("rw-------", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir.resolve(ShmDirectory.socketName(port)))));
            Socket[] t = fx.tcp();
            try (SocketChannel ch = rendezvous(fx.transport, port)) {
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(ShmFixture.clientKey(t[0]), 128)));
                Wire.Offer offer = assertInstanceOf(Wire.Offer.class, readFrame(ch));
                Path seg = Path.of(offer.segmentPath());
                assertEquals(dir, seg.getParent());
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(seg)));
                assertEquals(Segment.sizeFor(4096, 128), Files.size(seg));
                Segment.map(seg, offer.ringC2S(), offer.ringS2C(), offer.secret());
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Commit()));
                PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
                assertInstanceOf(PairingResult.Paired.class, s).connection().close();
                assertFalse(Files.exists(seg));
                assertEquals(List.of(), segments(dir));
                assertEquals(1, fx.tracer.of(Hook.SHM_SEGMENT_CREATE).size());
                assertEquals(1, fx.tracer.of(Hook.SHM_SEGMENT_UNLINK).size());
            }
        }
    }

    /** A client that asks to pair {@code client}'s connection, takes the OFFER and leaves without COMMIT; its segment. */
    private static Path offerThenLeave(ShmFixture fx, Socket client) throws IOException {
        try (SocketChannel ch = rendezvous(fx.transport, fx.serverSocket.getLocalPort())) {
            ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(ShmFixture.clientKey(client), 128)));
            return Path.of(assertInstanceOf(Wire.Offer.class, readFrame(ch)).segmentPath());
        }
    }

    @Test
    void aClientThatLeavesAfterTheOfferLeavesNothingAndTheServerFallsBack() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            Path seg = offerThenLeave(fx, t[0]);
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
            assertEquals("client closed the rendezvous before COMMIT", assertInstanceOf(PairingResult.Fallback.class, s).reason());
            assertFalse(Files.exists(seg));
        }
    }

    /**
     * The accepting thread reads the COMMIT itself, so the doorbell thread no longer watches a channel
     * before it: a client that leaves after the OFFER while no {@code accept()} comes for its connection
     * is still released (segment and entry) by the listener's sweep, within about a second.
     */
    @Test
    void aClientThatLeavesAfterTheOfferIsReleasedEvenIfNoAcceptComes() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            Path seg = offerThenLeave(fx, t[0]);
            ShmServerBinding b = (ShmServerBinding) fx.binding;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Files.exists(seg) || !b.decidedTcp(ShmFixture.serverKey(t[1]))) {
                assertTrue(System.nanoTime() < deadline, "not released in 10 s: segment " + Files.exists(seg)
                        + ", key decided TCP " + b.decidedTcp(ShmFixture.serverKey(t[1])));
                Thread.sleep(20);
            }
            PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
            assertEquals("client closed the rendezvous before COMMIT", assertInstanceOf(PairingResult.Fallback.class, s).reason());
        }
    }

    /** A COMMIT long before the application accepts is taken in by the sweep (the name goes); the accept then pairs. */
    @Test
    void aCommitLongBeforeTheAcceptIsTakenInAndTheAcceptPairs() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            try (SocketChannel ch = rendezvous(fx.transport, fx.serverSocket.getLocalPort())) {
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(ShmFixture.clientKey(t[0]), 128)));
                Wire.Offer offer = assertInstanceOf(Wire.Offer.class, readFrame(ch));
                Path seg = Path.of(offer.segmentPath());
                Segment.map(seg, offer.ringC2S(), offer.ringS2C(), offer.secret());
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Commit()));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (Files.exists(seg)) {
                    assertTrue(System.nanoTime() < deadline, "the COMMIT was not taken in within 10 s");
                    Thread.sleep(20);
                }
                PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
                assertInstanceOf(PairingResult.Paired.class, s).connection().close();
            }
        }
    }

    /**
     * An accept on a virtual thread (JDK 21+) does not wait on the channel in native code (that would hold
     * its carrier): it hands the channel to the doorbell loop, which reads the COMMIT, and pairs as any.
     */
    @Test
    void anAcceptOnAVirtualThreadPairs() throws Exception {
        java.lang.reflect.Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            org.junit.jupiter.api.Assumptions.assumeTrue(false, "virtual threads need JDK 21+");
            return;
        }
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            Socket[] t = fx.tcp();
            java.util.concurrent.CompletableFuture<PairingResult> accepted = new java.util.concurrent.CompletableFuture<>();
            Runnable accept = () -> accepted.complete(fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks()));
            try (SocketChannel ch = rendezvous(fx.transport, fx.serverSocket.getLocalPort())) {
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(ShmFixture.clientKey(t[0]), 128)));
                Wire.Offer offer = assertInstanceOf(Wire.Offer.class, readFrame(ch));
                Segment.map(Path.of(offer.segmentPath()), offer.ringC2S(), offer.ringS2C(), offer.secret());
                Object builder = ofVirtual.invoke(null);
                Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class).invoke(builder, accept);
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Commit()));
                PairingResult s = accepted.get(30, TimeUnit.SECONDS);
                assertInstanceOf(PairingResult.Paired.class, s).connection().close();
                assertFalse(Files.exists(Path.of(offer.segmentPath())), "the COMMIT was taken in: the name is gone");
            }
        }
    }

    @Test
    void listenRemovesSegmentsOfDeadProcessesOnly() throws Exception {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 0), new RecordingTracer());
        assertTrue(t.initialize());
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(10, TimeUnit.SECONDS));
        Path dead = Files.createFile(t.directory().resolve("seg-" + gone.pid() + "-00ff"));
        Path mine = Files.createFile(t.directory().resolve("seg-" + ProcessHandle.current().pid() + "-00ff"));
        try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
             ServerBinding b = t.listen((InetSocketAddress) ss.getLocalSocketAddress(), k -> new AcceptPolicy.Refuse("x"))) {
            assertTrue(b instanceof ShmServerBinding);
            assertFalse(Files.exists(dead));
            assertTrue(Files.exists(mine));
        }
    }

    @Test
    void aSecondLiveListenerOnThePortIsRefusedButAStaleSocketFileIsReplaced() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            InetSocketAddress bound = (InetSocketAddress) fx.serverSocket.getLocalSocketAddress();
            IOException e = assertThrows(IOException.class, () -> fx.transport.listen(bound, k -> new AcceptPolicy.Refuse("x")));
            assertTrue(e.getMessage().contains(fx.transport.directory().resolve(ShmDirectory.socketName(bound.getPort())).toString()),
                    e.getMessage());
        }
        // A socket file left by a dead JVM: bound once, closed, file still there.
        ShmTransport t = new ShmTransport(new ShmSettings(tmp, 0), new RecordingTracer());
        try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Path sock = t.directory().resolve(ShmDirectory.socketName(ss.getLocalPort()));
            try (ServerSocketChannel old = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                old.bind(UnixDomainSocketAddress.of(sock));
            }
            assertTrue(Files.exists(sock));
            try (ServerBinding b = t.listen((InetSocketAddress) ss.getLocalSocketAddress(), k -> new AcceptPolicy.Refuse("x"))) {
                assertTrue(Files.exists(sock) && b instanceof ShmServerBinding);
            }
            assertFalse(Files.exists(sock), "close() removes the socket file");
        }
    }

    @Test
    void aHundredConnectionsAtOnce() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            List<ShmFixture.Pair> pairs = new ArrayList<>();
            for (int i = 0; i < 100; i++) pairs.add(fx.pair());
            for (int i = 0; i < pairs.size(); i++) {
                byte[] msg = ("hello " + i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                pairs.get(i).client().outputStream().write(msg);
            }
            for (int i = 0; i < pairs.size(); i++) {
                byte[] expect = ("hello " + i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                ShmFixture.Pair p = pairs.get(i);
                assertArrayEquals(expect, ShmStreamSemanticsTest.readExactly(p.server().inputStream(), expect.length));
                p.server().outputStream().write(expect);
                assertArrayEquals(expect, ShmStreamSemanticsTest.readExactly(p.client().inputStream(), expect.length));
            }
            assertEquals(List.of(), segments(fx.transport.directory()));
            assertEquals(0, ((ShmServerBinding) fx.binding).entryCount());
        }
    }

    @Test
    void closingTheBindingReleasesPairingsNobodyClaimed() throws Exception {
        ShmFixture fx = new ShmFixture(tmp, 4096, 4096);
        Socket[] t = fx.tcp();
        PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks());
        try (var conn = assertInstanceOf(PairingResult.Paired.class, c).connection()) {
            fx.close(); // the application never accepted it
            assertEquals(-1, conn.inputStream().read());
            assertEquals("Connection reset by peer",
                    assertThrows(IOException.class, () -> conn.outputStream().write(new byte[1])).getMessage());
        }
        assertFalse(Files.exists(fx.transport.directory().resolve(ShmDirectory.socketName(fx.serverSocket.getLocalPort()))));
    }

    @Test
    void availabilityNamesTheDirectoryWhenItCannotBeUsed() {
        ShmTransport t = new ShmTransport(new ShmSettings(tmp.resolve("missing"), 0), new RecordingTracer());
        assertFalse(t.availability().isAvailable());
        String msg = t.availability().unavailabilityCause().orElseThrow().getMessage();
        assertTrue(msg.contains(tmp.resolve("missing").toString()), msg);
        RecordingTracer tracer = new RecordingTracer();
        ShmTransport ok = new ShmTransport(new ShmSettings(tmp, 0), tracer);
        assertTrue(ok.initialize());
        assertEquals(List.of("INITSHM_ENTRY detail=dir=" + ok.directory(), "INITSHM_EXIT rc=0 detail=libsora loaded, descriptor calls on, doorbells in an epoll set of sora's own"), tracer.events);
    }
}
