package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * One RDMA CM event channel and the daemon thread that reads it ({@code getCmEvent} with a bounded
 * wait; sora's native library acknowledges each event itself) and hands each event to the handler
 * registered for its CM id; CONNECT_REQUESTs go to the channel's request handler. Tasks queued with
 * {@link #execute} run on the thread between events.
 *
 * <p>DiSNI keeps the ids of a channel in an unsynchronised {@code HashMap}; ids created by other
 * threads while this one reads events would race on it, so the map is replaced with a synchronised
 * one when possible ({@link #createId()} also serialises creation).
 *
 * <p>Errors: sora's {@code _getCmEvent} returns -2 on error and DiSNI turns that into null, as for a
 * timeout, so an empty return that came back well before its timeout (or at all, for a wait without
 * one) counts as an error. Errors back off (1 ms doubling to {@link #MAX_BACKOFF_MILLIS}); after
 * {@link #MAX_ERRORS} in a row, or an exception, the loop ends, releases the channel and tells every
 * registered handler ({@link Handler#onLoopFailed}), so pending pairings fail with the reason
 * instead of the thread spinning hot.
 */
final class CmLoop {
    /** Receives the events of one CM id, on the loop thread. */
    interface Handler {
        void onCmEvent(RdmaCmEvent.EventType type, RdmaCmEvent event);

        /** Connection id for trace events; 0 if none yet. */
        default long conn() {
            return 0;
        }

        /** The loop ended on an error: no more events will come for this id. */
        default void onLoopFailed(String reason) {
        }
    }

    /** Where the events come from: the CM event channel (tests use a fake). */
    interface EventSource {
        /** The next event, waiting up to {@code timeoutMillis} ({@code < 0}: forever); null on timeout or error. */
        RdmaCmEvent next(int timeoutMillis) throws IOException;

        void close();
    }

    private final RdmaEventChannel channel;
    private final EventSource source;
    private volatile Tracer tracer;
    private final Handler requests;
    private final int timeoutMillis;
    private final Map<Object, Handler> handlers = new ConcurrentHashMap<>();
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Map<Long, Object> idMap;
    private final Thread thread;
    private volatile boolean closing;
    private volatile String failure;
    static final int MAX_ERRORS = 10;
    static final long MAX_BACKOFF_MILLIS = 100;

    /**
     * @param requests      handler of CONNECT_REQUEST events (listeners), or null
     * @param timeoutMillis how long one wait for an event may block (-1: forever, for loops that never end)
     */
    CmLoop(String name, Tracer tracer, Handler requests, int timeoutMillis) throws IOException {
        this(name, tracer, requests, timeoutMillis, RdmaEventChannel.createEventChannel());
    }

    private CmLoop(String name, Tracer tracer, Handler requests, int timeoutMillis, RdmaEventChannel channel) {
        this(name, tracer, requests, timeoutMillis, channel, new EventSource() {
            @Override
            public RdmaCmEvent next(int timeout) throws IOException {
                try {
                    return channel.getCmEvent(timeout);
                } catch (RuntimeException e) {
                    // DiSNI's own failure on one event (a CONNECT_REQUEST for a listen id released by another
                    // thread as it came: DiSNI dereferences the id it no longer has): counted as an error, as an
                    // empty return is, so that only a persistent one ends the loop and fails its connections
                    return null;
                }
            }

            @Override
            public void close() {
                try {
                    channel.destroyEventChannel();
                } catch (IOException | RuntimeException e) {
                    // the process is going anyway
                }
            }
        });
    }

    /** A loop on {@code source}; {@code channel} (null in tests) is where {@link #createId()} creates ids. */
    CmLoop(String name, Tracer tracer, Handler requests, int timeoutMillis, RdmaEventChannel channel, EventSource source) {
        this.channel = channel;
        this.source = source;
        this.tracer = tracer;
        this.requests = requests;
        this.timeoutMillis = timeoutMillis;
        this.idMap = channel == null ? null : synchronizeIdMap(channel);
        this.thread = io.sora.transport.AgentThreads.daemon(this::run, name);
        thread.start();
    }

    @SuppressWarnings("unchecked")
    private static Map<Long, Object> synchronizeIdMap(RdmaEventChannel channel) {
        try {
            Field f = channel.getClass().getDeclaredField("idMap");
            f.setAccessible(true);
            Map<Long, Object> synced = new SynchronizedMap<>((Map<Long, Object>) f.get(channel));
            f.set(channel, synced);
            return synced;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // DiSNI changed: creation is still serialised by createId
        }
    }

    /** A HashMap whose every access is synchronised (DiSNI's field has type HashMap). */
    private static final class SynchronizedMap<K, V> extends HashMap<K, V> {
        SynchronizedMap(Map<K, V> initial) {
            super(initial);
        }

        @Override
        public synchronized V get(Object key) {
            return super.get(key);
        }

        @Override
        public synchronized V put(K key, V value) {
            return super.put(key, value);
        }

        @Override
        public synchronized V remove(Object key) {
            return super.remove(key);
        }
    }

    /** The tracer of the transport using the loop now (the client loop is shared JVM-wide). */
    void setTracer(Tracer tracer) {
        this.tracer = tracer;
    }

    RdmaEventChannel channel() {
        return channel;
    }

    synchronized RdmaCmId createId() throws IOException {
        return channel.createId(RdmaCm.RDMA_PS_TCP);
    }

    /** Routes the events of {@code id} (an {@link RdmaCmId}) to {@code h}. */
    void register(Object id, Handler h) {
        handlers.put(id, h);
        String f = failure;
        if (f != null && handlers.remove(id, h)) h.onLoopFailed(f); // the loop is gone: no event will come
    }

    /** Why the loop ended on an error, or null while it runs (or ended normally). */
    String failure() {
        return failure;
    }

    /** Forgets {@code id} and destroys it (its events stop; the kernel rejects a pending request). */
    void release(RdmaCmId id) {
        // destroyed before its handler goes: the loop ends (and frees the event channel) once no handler is
        // left, and an id destroyed after its channel was freed read freed memory (found in review, 2026-11-28)
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            // already gone with its channel
        }
        handlers.remove(id);
        if (idMap != null) {
            synchronized (idMap) {
                idMap.values().remove(id);
            }
        }
    }

    /**
     * Releases an id no handler of this loop uses (a listen id: CONNECT_REQUESTs name the new id, not
     * it) at once, from the calling thread, where DiSNI's id map is synchronised ({@link #synchronizeIdMap});
     * else on the loop thread, like {@link #execute}d tasks, which run only when the loop's current wait for
     * an event ends (up to its timeout: a listen id kept its port up to 500 ms after the server socket
     * closed, and a server bound again to that port at once could not listen for RDMA and stayed on TCP).
     * The native library acknowledges every event as it reads it, so destroying the id never waits for one.
     */
    void releaseUnused(RdmaCmId id) {
        if (idMap != null) release(id);
        else execute(() -> release(id));
    }

    void execute(Runnable task) {
        tasks.add(task);
    }

    /** Ends the loop once no registered id is left (established connections keep their events). */
    void closeWhenIdle() {
        closing = true;
    }

    private void run() {
        try {
            int errors = 0;
            while (!(closing && handlers.isEmpty())) {
                int wait = closing ? 200 : timeoutMillis;
                long start = System.nanoTime();
                RdmaCmEvent event = source.next(wait);
                long elapsed = System.nanoTime() - start;
                Runnable t;
                while ((t = tasks.poll()) != null) t.run();
                if (event != null) {
                    errors = 0;
                    dispatch(event);
                } else if (wait < 0 || (wait > 0 && elapsed < wait * 500_000L)) {
                    // no event long before the timeout (or without one): rdma_get_cm_event failed
                    if (++errors >= MAX_ERRORS) {
                        fail("rdma_get_cm_event failed " + errors + " times in a row (the CM event channel is broken)");
                        return;
                    }
                    LockSupport.parkNanos(Math.min(MAX_BACKOFF_MILLIS, 1L << (errors - 1)) * 1_000_000L);
                } else {
                    errors = 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            fail("CM event loop failed: " + e);
        } catch (Error e) {
            // (a thread that could not be made for a connection, say): the loop is marked failed, so that the
            // client's next connect makes a new one and every handler hears of it, instead of a dead loop
            // that no failure names (found in review, 2026-11-28)
            fail("CM event loop failed: " + e);
            throw e;
        } finally {
            Runnable t;
            while ((t = tasks.poll()) != null) t.run();
            source.close();
        }
    }

    private void fail(String why) {
        failure = "RDMA CM event channel failed: " + why;
        closing = true;
        if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, 0, "rdma", failure, null);
        for (Map.Entry<Object, Handler> e : handlers.entrySet()) {
            if (!handlers.remove(e.getKey(), e.getValue())) continue;
            try {
                e.getValue().onLoopFailed(failure);
            } catch (RuntimeException x) {
                if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, e.getValue().conn(), "rdma", "handler failed: " + x, null);
            }
        }
        if (requests != null) {
            try {
                requests.onLoopFailed(failure);
            } catch (RuntimeException x) {
                // the listener falls back anyway
            }
        }
    }

    /** Waits up to {@code millis} for the loop thread to end; whether it has. */
    boolean awaitEnd(long millis) throws InterruptedException {
        thread.join(millis);
        return !thread.isAlive();
    }

    private void dispatch(RdmaCmEvent event) {
        RdmaCmEvent.EventType[] types = RdmaCmEvent.EventType.values();
        int code = event.getEvent();
        RdmaCmEvent.EventType type = code >= 0 && code < types.length ? types[code] : null;
        boolean request = type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST;
        // an event of an id released meanwhile (by another thread, after the native library acknowledged
        // the event) names no id: DiSNI finds none in its map; a lookup of null threw and ended the loop
        Object id = event.getConnIdPriv();
        Handler h = request ? requests : id == null ? null : handlers.get(id);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.CM_EVENT, h == null ? 0 : h.conn(), "rdma", null,
                    type == null ? "event " + code : type.name());
        }
        if (h == null || type == null) return;
        try {
            h.onCmEvent(type, event);
        } catch (RuntimeException e) {
            if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, h.conn(), "rdma", "handler failed: " + e, type.name());
        }
    }
}
