package io.sora.agent.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sora.transport.FastConnection;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ConnectionRegistryTest {
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final ConnectionRegistry registry = new ConnectionRegistry(now::get);

    /** A fast connection whose counters the test moves. */
    static final class Counted implements FastConnection {
        final AtomicLong sent = new AtomicLong();
        final AtomicLong received = new AtomicLong();

        @Override public long id() { return 7; }
        @Override public String path() { return "shm"; }
        @Override public InputStream inputStream() { return InputStream.nullInputStream(); }
        @Override public OutputStream outputStream() { return OutputStream.nullOutputStream(); }
        @Override public void shutdownInput() { }
        @Override public void shutdownOutput() { }
        @Override public void close() { }
        @Override public long bytesSent() { return sent.get(); }
        @Override public long bytesReceived() { return received.get(); }
    }

    @Test
    void rowsShowLiveByteCountsAgeAndReason() {
        Socket s = new Socket();
        Counted c = new Counted();
        registry.add(s, 7, ConnectionRegistry.Side.CLIENT, "127.0.0.1:40001", "127.0.0.1:65444", "shm", "paired (c.conf:1)", c);
        c.sent.set(4096);
        c.received.set(1024);
        now.addAndGet(1500);
        ConnectionInfo row = registry.snapshot().get(0);
        assertEquals(7, row.getId());
        assertEquals("client", row.getSide());
        assertEquals("shm", row.getPath());
        assertEquals(4096, row.getBytesSent());
        assertEquals(1024, row.getBytesReceived());
        assertEquals(1500, row.getAgeMillis());
        assertEquals("open", row.getState());
        assertEquals("paired (c.conf:1)", row.getReason());
        c.sent.set(8192);
        assertEquals(8192, registry.snapshot().get(0).getBytesSent());
    }

    @Test
    void tcpConnectionsHaveNoByteCounts() {
        registry.add(new Socket(), 3, ConnectionRegistry.Side.SERVER, "a:1", "b:2", "tcp", "no pairing request within 100 ms", null);
        ConnectionInfo row = registry.snapshot().get(0);
        assertEquals(-1, row.getBytesSent());
        assertEquals(-1, row.getBytesReceived());
        assertEquals("server", row.getSide());
    }

    @Test
    void closedConnectionsStayBrieflyThenGo() throws Exception {
        Socket reported = new Socket();
        Socket closedAfterDetach = new Socket();
        registry.add(reported, 1, ConnectionRegistry.Side.CLIENT, "a:1", "b:2", "tcp", "r", null);
        registry.add(closedAfterDetach, 2, ConnectionRegistry.Side.CLIENT, "a:3", "b:2", "tcp", "r", null);
        now.addAndGet(100);
        registry.closed(reported);
        closedAfterDetach.close(); // no advice reports it: the snapshot sees Socket.isClosed()
        now.addAndGet(400);
        List<ConnectionInfo> rows = registry.snapshot();
        assertEquals("closed", rows.get(0).getState());
        assertEquals(100, rows.get(0).getAgeMillis(), "age stops at the close");
        assertEquals("closed", rows.get(1).getState());
        now.addAndGet(ConnectionRegistry.KEEP_CLOSED_MILLIS + 1);
        assertEquals(0, registry.snapshot().size());
        assertEquals(0, registry.size());
    }

    @Test
    void closedConnectionsBeyondTheLimitGoOldestFirstOpenOnesStay() throws Exception {
        Socket open = new Socket();
        registry.add(open, 0, ConnectionRegistry.Side.SERVER, "a:0", "b:2", "shm", "r", null);
        int n = ConnectionRegistry.MAX_CLOSED + 300;
        for (int i = 1; i <= n; i++) {
            Socket s = new Socket();
            registry.add(s, i, ConnectionRegistry.Side.SERVER, "a:" + i, "b:2", "shm", "r", null);
            registry.closed(s);
        }
        List<ConnectionInfo> rows = registry.snapshot();
        assertEquals(ConnectionRegistry.MAX_CLOSED + 1, rows.size(), "the open one and the most recent closed ones");
        assertEquals(0L, rows.get(0).getId(), "the open connection stays, however old");
        assertEquals("open", rows.get(0).getState());
        assertEquals(n - ConnectionRegistry.MAX_CLOSED + 1, rows.get(1).getId(), "the oldest closed ones went first");
        assertEquals((long) n, rows.get(rows.size() - 1).getId());
        open.close();
    }

    @Test
    void rowsComeOldestFirst() {
        for (int i = 1; i <= 3; i++) {
            registry.add(new Socket(), i, ConnectionRegistry.Side.CLIENT, "a:" + i, "b:2", "tcp", "r", null);
        }
        assertEquals(List.of(1L, 2L, 3L), registry.snapshot().stream().map(ConnectionInfo::getId).toList());
    }

    /**
     * {@code closed} runs on every {@code Socket.close} in the JVM: it must not wait for a lock shared
     * by the whole table (the synchronized WeakHashMap it was made every close wait on its monitor).
     * Holding the table's own monitor, a close on another thread still completes.
     */
    @Test
    void aCloseWaitsForNoLockSharedByTheTable() throws Exception {
        Socket s = new Socket();
        registry.add(s, 1, ConnectionRegistry.Side.CLIENT, "a:1", "b:2", "tcp", "r", null);
        java.lang.reflect.Field f = ConnectionRegistry.class.getDeclaredField("bySocket");
        f.setAccessible(true);
        Object table = f.get(registry);
        Thread closer = new Thread(() -> registry.closed(s), "closer");
        synchronized (table) {
            closer.start();
            closer.join(10_000);
            assertFalse(closer.isAlive(), "the close waited for the table's monitor");
        }
        assertEquals("closed", registry.snapshot().get(0).getState());
    }
}
