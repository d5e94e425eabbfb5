package io.sora.transport.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
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
    private final ByteBuffer probe = ByteBuffer.allocate(1);

    /** Keeps {@code k} for the listener at {@code socket}; false (not taken) when that listener has enough. */
    synchronized boolean give(Path socket, Kept k) {
        ArrayDeque<Kept> q = byListener.computeIfAbsent(socket, p -> new ArrayDeque<>());
        if (q.size() >= PER_LISTENER) return false;
        q.addFirst(k); // the most recently used first: its pages are the likeliest still in the caches
        return true;
    }

    /**
     * A kept channel to the listener at {@code socket} whose other end is still there, or null. A channel
     * found ended (the listener closed, its process died) is closed and the next one tried.
     */
    Kept take(Path socket) {
        for (;;) {
            Kept k;
            synchronized (this) {
                ArrayDeque<Kept> q = byListener.get(socket);
                k = q == null ? null : q.pollFirst();
            }
            if (k == null) return null;
            if (open(k.channel())) return k;
            close(k.channel());
        }
    }

    /** Whether the channel is open with nothing to read: an idle kept channel's listener sends nothing. */
    private boolean open(SocketChannel ch) {
        if (!ch.isOpen()) return false;
        try {
            synchronized (probe) {
                probe.clear();
                return ch.read(probe) == 0;
            }
        } catch (IOException e) {
            return false;
        }
    }

    /** How many channels are kept for the listener at {@code socket} (tests). */
    synchronized int count(Path socket) {
        ArrayDeque<Kept> q = byListener.get(socket);
        return q == null ? 0 : q.size();
    }

    /** Closes every kept channel (the listeners drop their halves at the end of file). */
    void closeAll() {
        java.util.List<Kept> all = new java.util.ArrayList<>();
        synchronized (this) {
            for (ArrayDeque<Kept> q : byListener.values()) all.addAll(q);
            byListener.clear();
        }
        for (Kept k : all) close(k.channel());
    }

    static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }
}
