package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.agent.status.ConnectionRegistry;
import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.rules.Rule;
import io.sora.rules.RuleSet;
import io.sora.trace.Tracer;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingResult;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PathRecorderTest {
    private final ConnectionRegistry registry = new ConnectionRegistry();
    private final PathRecorder recorder = new PathRecorder(Tracer.OFF, registry);
    private final Rule rule = rule();

    private static Rule rule() {
        try {
            return RuleSet.parse("c.conf", "shm connect 127.0.0.1 5000").rules().get(0);
        } catch (io.sora.rules.RuleSyntaxException e) {
            throw new AssertionError(e);
        }
    }

    /** A fast connection that counts its closes. */
    static final class Closes implements FastConnection {
        final AtomicInteger closes = new AtomicInteger();

        @Override public long id() { return 9; }
        @Override public String path() { return "shm"; }
        @Override public InputStream inputStream() { return InputStream.nullInputStream(); }
        @Override public OutputStream outputStream() { return OutputStream.nullOutputStream(); }
        @Override public void shutdownInput() { }
        @Override public void shutdownOutput() { }
        @Override public void close() { closes.incrementAndGet(); }
        @Override public long bytesSent() { return 0; }
        @Override public long bytesReceived() { return 0; }
    }

    /** The pairing's key: client 127.0.0.1:40001, server [::1]:5000. */
    private static final ConnectionKey KEY = new ConnectionKey(new InetSocketAddress("127.0.0.1", 40001),
            new InetSocketAddress("::1", 5000));

    @Test
    void theStatusViewShowsEachSideItsOwnEndAsLocal() {
        recorder.record(new Socket(), Side.CLIENT, KEY, rule, new PairingResult.Paired(new Closes()));
        recorder.record(new Socket(), Side.SERVER, KEY, rule, new PairingResult.Paired(new Closes()));
        var rows = registry.snapshot();
        assertEquals("127.0.0.1:40001", rows.get(0).getLocal());
        assertEquals("[0:0:0:0:0:0:0:1]:5000", rows.get(0).getRemote());
        assertEquals("[0:0:0:0:0:0:0:1]:5000", rows.get(1).getLocal());
        assertEquals("127.0.0.1:40001", rows.get(1).getRemote());
        assertEquals("paired (c.conf:1)", rows.get(1).getReason());
    }

    @Test
    void aPairedSocketIsServedUntilItsCloseClosesTheFastPathOnce() {
        Socket s = new Socket();
        Closes c = new Closes();
        recorder.record(s, Side.CLIENT, KEY, rule, new PairingResult.Paired(c));
        PairedSocket p = recorder.paired(s);
        assertNotNull(p);
        assertEquals("shm", p.connection().path());
        assertEquals("paired (c.conf:1)", registry.snapshot().get(0).getReason());
        recorder.closed(s);
        recorder.closed(s);
        assertNull(recorder.paired(s));
        assertEquals(1, c.closes.get());
        assertEquals("closed", registry.snapshot().get(0).getState());
    }

    @Test
    void aFallbackIsRecordedAsTcpWithItsReason() {
        Socket s = new Socket();
        recorder.record(s, Side.SERVER, KEY, rule, new PairingResult.Fallback("no pairing request within 100 ms"));
        assertNull(recorder.paired(s));
        assertEquals("tcp", registry.snapshot().get(0).getPath());
        assertEquals("no pairing request within 100 ms", registry.snapshot().get(0).getReason());
    }

    /**
     * Detach: a paired socket whose application holds both streams keeps its fast path (the watcher closes
     * it with the socket); one whose streams were not both taken (an accepted socket queued to a worker, a
     * client that wrote its request but had not asked for its input yet) is cut at once, since a stream
     * asked for after the detach is the TCP socket's, on which the peer sends nothing; a pairing recorded
     * after the hand-over (begun before the bridge went) is cut and recorded as TCP with why.
     */
    @Test
    void theDetachKeepsOnlyTheConnectionsWhoseStreamsAreHeld() {
        Socket held = new Socket();
        Socket queued = new Socket();
        Socket half = new Socket();
        Closes ch = new Closes();
        Closes cq = new Closes();
        Closes c2 = new Closes();
        recorder.record(held, Side.SERVER, KEY, rule, new PairingResult.Paired(ch));
        InputStream in = recorder.paired(held).in(held, null);
        OutputStream out = recorder.paired(held).out(held, null);
        recorder.record(queued, Side.SERVER, KEY, rule, new PairingResult.Paired(cq));
        recorder.record(half, Side.CLIENT, KEY, rule, new PairingResult.Paired(c2));
        OutputStream halfOut = recorder.paired(half).out(half, null);
        assertEquals(1, recorder.handOver(new io.sora.agent.status.DetachedConnections<>()), "kept: what detach reports");
        assertEquals(0, ch.closes.get(), "both streams held: kept until the socket closes");
        assertEquals(1, cq.closes.get(), "no stream taken: cut");
        assertEquals(1, c2.closes.get(), "only the output taken: cut");
        Socket late = new Socket();
        Closes cl = new Closes();
        recorder.record(late, Side.CLIENT, KEY, rule, new PairingResult.Paired(cl));
        assertEquals(1, cl.closes.get(), "a pairing recorded after the hand-over");
        assertNull(recorder.paired(late));
        var row = registry.snapshot().get(registry.snapshot().size() - 1);
        assertEquals("tcp", row.getPath());
        assertEquals("sora detached while this connection was being paired", row.getReason());
        java.lang.ref.Reference.reachabilityFence(in);
        java.lang.ref.Reference.reachabilityFence(out);
        java.lang.ref.Reference.reachabilityFence(halfOut);
    }

    /** A ring medium whose peer moved (or not) its bytes to TCP at byte 0; nothing else happens on it. */
    static final class Moved implements io.sora.transport.RingMedium {
        final boolean moved;
        volatile int follows;

        Moved(boolean moved) {
            this.moved = moved;
        }

        @Override public void setWaker(Waker w) { }
        @Override public int receiveCapacity() { return 64; }
        @Override public long producedByPeer() { return 0; }
        @Override public void readRing(int o, byte[] d, int off, int len) { }
        @Override public void publishConsumed(long c) { }
        @Override public int sendCapacity() { return 64; }
        @Override public long consumedByPeer() { return 0; }
        @Override public void writeRing(int o, byte[] src, int off, int len) { }
        @Override public void publishProduced(long p) { }
        @Override public int peerFlags() { return 0; }
        @Override public void publishFlags(int f) { }
        @Override public void announceReaderWaiting(boolean w) { }
        @Override public void announceWriterWaiting(boolean w) { }
        @Override public void close() { }
        @Override public boolean carriesTcpSwitch() { return true; }
        @Override public void offerTcpFollow() { follows++; }
        @Override public long peerSwitchedAt() { return moved ? 0 : -1; }
    }

    private static io.sora.transport.RingConnection ring(Moved m) {
        return new io.sora.transport.RingConnection(7, "shm", m, new io.sora.transport.SocketHooks() {
            @Override public int soTimeoutMillis() { return 0; }
            @Override public void closeSocket() { }
        }, 0);
    }

    /**
     * Detach, a connection cut because its application had not taken both streams: where its peer had moved its
     * bytes to TCP (docs/shm.md, "Buffering"), the socket is reset, since the TCP stream the application asks for
     * later would start after the bytes left in the ring; where it had not, the socket stays as the cut left it.
     * And a socket's end offers to follow such a move as it is paired (found in review, 2026-11-29).
     */
    @Test
    void theDetachResetsACutSocketWhosePeerMovedToTcp() throws Exception {
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 5, java.net.InetAddress.getLoopbackAddress());
             Socket moved = new Socket(java.net.InetAddress.getLoopbackAddress(), ss.getLocalPort());
             Socket movedPeer = ss.accept();
             Socket stayed = new Socket(java.net.InetAddress.getLoopbackAddress(), ss.getLocalPort());
             Socket stayedPeer = ss.accept()) {
            Moved mm = new Moved(true);
            Moved ms = new Moved(false);
            recorder.record(moved, Side.CLIENT, KEY, rule, new PairingResult.Paired(ring(mm)));
            recorder.record(stayed, Side.CLIENT, KEY, rule, new PairingResult.Paired(ring(ms)));
            assertEquals(1, mm.follows, "a socket's end offers to follow as it pairs");
            recorder.handOver(new io.sora.agent.status.DetachedConnections<>());
            assertTrue(moved.isClosed(), "the cut socket whose peer moved to TCP");
            assertFalse(stayed.isClosed(), "a cut socket whose peer did not move");
            movedPeer.setSoTimeout(10_000);
            assertThrows(java.net.SocketException.class, () -> movedPeer.getInputStream().read(), "the peer sees a reset");
            java.lang.ref.Reference.reachabilityFence(stayedPeer);
        }
    }

    /** Every Socket.close in the JVM consults the paired table: no close waits for a lock shared by the table. */
    @Test
    void aCloseWaitsForNoLockSharedByTheTable() throws Exception {
        Socket s = new Socket();
        Closes c = new Closes();
        recorder.record(s, Side.CLIENT, KEY, rule, new PairingResult.Paired(c));
        java.lang.reflect.Field f = PathRecorder.class.getDeclaredField("paired");
        f.setAccessible(true);
        Thread closer = new Thread(() -> recorder.closed(s), "closer");
        synchronized (f.get(recorder)) {
            closer.start();
            closer.join(10_000);
            assertFalse(closer.isAlive(), "the close waited for the table's monitor");
        }
        assertEquals(1, c.closes.get());
    }
}
