package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

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
