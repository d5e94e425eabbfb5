package io.sora.transport.shm;

import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * A client's channels (and their segments, still mapped at both ends) kept after connections closed,
 * per listener, for the next connection to the same listener (see {@link ShmMedium}, "Kept for the
 * next connection"). At most {@link #PER_LISTENER} per listener: each holds a descriptor and its
 * segment's memory at both ends (132 KiB with the default buffer sizes) for as long as this process and
 * the listener live; more would only hold memory for a burst of parallel connections that may not
 * come back.
 */
final class KeptChannels {
    static final int PER_LISTENER = 4;

    /** A kept channel and its segment (a class, not a record: see ConnectionKey on records in the agent). */
    static final class Kept {
        private final SocketChannel channel;
        private final Segment segment;

        Kept(SocketChannel channel, Segment segment) {
            this.channel = channel;
            this.segment = segment;
        }

        SocketChannel channel() {
            return channel;
        }

        Segment segment() {
            return segment;
        }
    }

    private final Map<Path, ArrayDeque<Kept>> byListener = new HashMap<>();

    /**
     * Set by {@link #closeAll} (the transport's detach): nothing is kept after it, or a connection that
     * closes after a detach would leave its channel in the doorbell loop's watch, which then never ends
     * (with the detached agent's class loader, a descriptor and a segment at each end; found in review,
     * 2026-11-28).
     */
    private boolean closed;

    /**
     * Keeps {@code k} for the listener at {@code socket}; false (not taken) when that listener has enough,
     * or after {@link #closeAll}.
     */
    synchronized boolean give(Path socket, Kept k) {
        if (closed) return false;
        ArrayDeque<Kept> q = byListener.computeIfAbsent(socket, p -> new ArrayDeque<>());
        if (q.size() >= PER_LISTENER) return false;
        q.addFirst(k); // the most recently used first: its pages are the likeliest still in the caches
        return true;
    }

    /**
     * A kept channel to the listener at {@code socket} that both ends kept ({@link Segment#OFF_KEPT}: the
     * listener's end too, which may still be closing) and whose segment has a {@code ring}-byte receive
     * ring, or null. A channel whose end was seen is not here: the doorbell loop drops it ({@link #remove}).
     * One of another receive ring size (a rule of another buffer size) is closed.
     */
    Kept take(Path socket, int ring) {
        for (;;) {
            Kept found = null;
            synchronized (this) {
                ArrayDeque<Kept> q = byListener.get(socket);
                if (q == null) return null;
                for (java.util.Iterator<Kept> it = q.iterator(); it.hasNext(); ) {
                    Kept k = it.next();
                    int both = Segment.KEPT_CLIENT | Segment.KEPT_SERVER;
                    if ((k.segment().words.getIntAcquire(Segment.OFF_KEPT) & both) != both) continue;
                    it.remove();
                    found = k;
                    break;
                }
            }
            if (found == null) return null;
            if (found.segment().ringS2C == ring && found.channel().isOpen()) return found;
            close(found.channel());
        }
    }

    /** Forgets {@code channel} (its end was seen, and it is closed). */
    synchronized void remove(SocketChannel channel) {
        for (ArrayDeque<Kept> q : byListener.values()) {
            if (q.removeIf(k -> k.channel() == channel)) return;
        }
    }

    /** How many channels are kept for the listener at {@code socket} (tests). */
    synchronized int count(Path socket) {
        ArrayDeque<Kept> q = byListener.get(socket);
        return q == null ? 0 : q.size();
    }

    /** Closes every kept channel (the listeners drop their halves at the end of file), and keeps none from now on. */
    void closeAll() {
        java.util.List<Kept> all = new java.util.ArrayList<>();
        synchronized (this) {
            closed = true;
            for (ArrayDeque<Kept> q : byListener.values()) all.addAll(q);
            byListener.clear();
        }
        for (Kept k : all) close(k.channel());
    }

    /** Closes a kept channel: out of the doorbell loop's watch first (it reads kept channels for their end). */
    static void close(SocketChannel ch) {
        DoorbellLoop.get().close(ch);
    }
}
