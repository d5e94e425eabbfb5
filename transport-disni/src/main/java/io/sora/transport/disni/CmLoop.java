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

/**
 * One RDMA CM event channel and the daemon thread that reads it ({@code getCmEvent} with a bounded
 * wait; sora's native library acknowledges each event itself) and hands each event to the handler
 * registered for its CM id; CONNECT_REQUESTs go to the channel's request handler. Tasks queued with
 * {@link #execute} run on the thread between events.
 *
 * <p>DiSNI keeps the ids of a channel in an unsynchronised {@code HashMap}; ids created by other
 * threads while this one reads events would race on it, so the map is replaced with a synchronised
 * one when possible ({@link #createId()} also serialises creation).
 */
final class CmLoop {
    /** Receives the events of one CM id, on the loop thread. */
    interface Handler {
        void onCmEvent(RdmaCmEvent.EventType type, RdmaCmEvent event);

        /** Connection id for trace events; 0 if none yet. */
        default long conn() {
            return 0;
        }
    }

    private final RdmaEventChannel channel;
    private volatile Tracer tracer;
    private final Handler requests;
    private final int timeoutMillis;
    private final Map<RdmaCmId, Handler> handlers = new ConcurrentHashMap<>();
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Map<Long, Object> idMap;
    private final Thread thread;
    private volatile boolean closing;

    /**
     * @param requests      handler of CONNECT_REQUEST events (listeners), or null
     * @param timeoutMillis how long one wait for an event may block (-1: forever, for loops that never end)
     */
    CmLoop(String name, Tracer tracer, Handler requests, int timeoutMillis) throws IOException {
        this.channel = RdmaEventChannel.createEventChannel();
        this.tracer = tracer;
        this.requests = requests;
        this.timeoutMillis = timeoutMillis;
        this.idMap = synchronizeIdMap(channel);
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
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

    void register(RdmaCmId id, Handler h) {
        handlers.put(id, h);
    }

    /** Forgets {@code id} and destroys it (its events stop; the kernel rejects a pending request). */
    void release(RdmaCmId id) {
        handlers.remove(id);
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            // already gone with its channel
        }
        if (idMap != null) {
            synchronized (idMap) {
                idMap.values().remove(id);
            }
        }
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
            while (!(closing && handlers.isEmpty())) {
                RdmaCmEvent event = channel.getCmEvent(closing ? 200 : timeoutMillis);
                Runnable t;
                while ((t = tasks.poll()) != null) t.run();
                if (event != null) dispatch(event);
            }
        } catch (IOException | RuntimeException e) {
            if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, 0, "rdma", "CM event loop failed: " + e, null);
        } finally {
            Runnable t;
            while ((t = tasks.poll()) != null) t.run();
            try {
                channel.destroyEventChannel();
            } catch (IOException | RuntimeException e) {
                // the process is going anyway
            }
        }
    }

    private void dispatch(RdmaCmEvent event) {
        RdmaCmEvent.EventType[] types = RdmaCmEvent.EventType.values();
        int code = event.getEvent();
        RdmaCmEvent.EventType type = code >= 0 && code < types.length ? types[code] : null;
        boolean request = type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST;
        Handler h = request ? requests : handlers.get(event.getConnIdPriv());
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
