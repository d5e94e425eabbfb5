package io.sora.agent.status;

import io.sora.transport.FastConnection;
import java.lang.ref.WeakReference;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The connections of this JVM that a rule matched, paired or left on TCP with the reason, for the status
 * view. Connections no rule matched are never registered, so they cost nothing here.
 *
 * <p>A connection counts as closed once its socket was closed (reported by {@link #closed}, or seen by
 * {@link Socket#isClosed()} on the next snapshot, which also covers sockets closed after detach) or was
 * garbage-collected; closed entries stay visible for {@link #KEEP_CLOSED_MILLIS} (at most the
 * {@link #MAX_CLOSED} most recent) and are then dropped, so the registry's size is bounded by the open
 * connections plus those closed recently.
 *
 * <p>Thread-safe: any thread may add, close and snapshot at once.
 */
public final class ConnectionRegistry {
    /** How long a closed connection stays in the table: long enough to see how it ended. */
    public static final long KEEP_CLOSED_MILLIS = 30_000;
    /**
     * The most closed connections kept (the most recent): a server that takes thousands of connections a
     * second would otherwise keep every one of the last 30 s, and the table was walked whole every
     * {@link #PRUNE_EVERY} connections. Measured 2026-11-27 (a churn of 40,000 connections one after
     * another through an shm accept rule, async-profiler): the walks were 13 % of the accepting thread's
     * time, and the table held every connection of the run.
     */
    static final int MAX_CLOSED = 1024;
    private static final int PRUNE_EVERY = 256;

    /** Which end of the TCP connection this JVM is. */
    public enum Side {
        CLIENT, SERVER;

        String label() {
            return this == CLIENT ? "client" : "server";
        }
    }

    private final LongSupplier clock;
    /**
     * Entries added since the last walk, newest first: pushed with one compare-and-set of {@link #added}
     * (a field updater, Unsafe underneath; a ConcurrentLinkedQueue's nodes go through VarHandles, a dozen
     * calls each interpreted, as a cold JVM's first few hundred connections run). The walks ({@link #prune},
     * {@link #snapshot}, {@link #size}) move them to {@link #entries}, oldest first, under {@link #pruning}.
     */
    private volatile Added added;
    private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<ConnectionRegistry, Added> ADDED =
            java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(ConnectionRegistry.class, Added.class, "added");
    /** The entries, oldest first, as of the last walk; guarded by {@link #pruning}. */
    private final java.util.ArrayDeque<Entry> entries = new java.util.ArrayDeque<>();

    /** A push onto {@link #added}. */
    private static final class Added {
        final Entry entry;
        final Added next;

        Added(Entry entry, Added next) {
            this.entry = entry;
            this.next = next;
        }
    }
    /** Consulted on every {@code Socket.close} in the JVM: concurrent, so no close waits for another. */
    private final WeakIdentityMap<Socket, Entry> bySocket = new WeakIdentityMap<>();
    private int addsSincePrune;

    /** A registry on the wall clock. */
    public ConnectionRegistry() {
        this(System::currentTimeMillis);
    }

    /** A registry on the given millisecond clock (tests). */
    public ConnectionRegistry(LongSupplier clock) {
        this.clock = clock;
    }

    /** Registers a connection whose path was just decided, with the socket's own addresses. */
    public void add(Socket socket, long id, Side side, String path, String reason, FastConnection connection) {
        addEntry(socket, id, side, socket.getLocalSocketAddress(), socket.getRemoteSocketAddress(), path, reason, connection);
    }

    /**
     * Registers a connection whose path was just decided, with its addresses as the pairing knew them:
     * no {@code getsockname} and no text made per connection (the status view formats them when asked;
     * with thousands of connections a second, both showed in each set-up's profile).
     */
    public void add(Socket socket, long id, Side side, java.net.SocketAddress local, java.net.SocketAddress remote,
                    String path, String reason, FastConnection connection) {
        addEntry(socket, id, side, local, remote, path, reason, connection);
    }

    private static String text(Object address) {
        return address instanceof String t ? t : hostPort((java.net.SocketAddress) address);
    }

    /** {@code 127.0.0.1:5000} or {@code [::1]:5000}. */
    static String hostPort(java.net.SocketAddress a) {
        if (!(a instanceof java.net.InetSocketAddress i) || i.getAddress() == null) {
            return String.valueOf(a);
        }
        String host = i.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + i.getPort();
    }

    /**
     * Registers a connection whose path was just decided.
     *
     * @param connection the fast connection, or null for a connection left on TCP
     */
    public void add(Socket socket, long id, Side side, String local, String remote, String path, String reason,
                    FastConnection connection) {
        addEntry(socket, id, side, local, remote, path, reason, connection);
    }

    /** {@code local} and {@code remote}: text, or a {@link java.net.SocketAddress} formatted when shown. */
    private void addEntry(Socket socket, long id, Side side, Object local, Object remote, String path, String reason,
                          FastConnection connection) {
        Entry e = new Entry(new WeakReference<>(socket), id, side, local, remote, path, reason, connection, clock.getAsLong());
        for (;;) {
            Added head = added;
            if (ADDED.compareAndSet(this, head, new Added(e, head))) break;
        }
        bySocket.put(socket, e);
        boolean prune;
        synchronized (this) {
            prune = ++addsSincePrune >= PRUNE_EVERY;
            if (prune) {
                addsSincePrune = 0;
            }
        }
        if (prune) {
            prune(clock.getAsLong());
        }
    }

    /** Marks the socket's connection closed now; a socket never registered is ignored. */
    public void closed(Socket socket) {
        if (bySocket.isEmpty()) {
            return;
        }
        Entry e = bySocket.remove(socket);
        if (e != null) {
            e.markClosed(clock.getAsLong());
        }
    }

    /** The table, oldest first; drops entries closed more than {@link #KEEP_CLOSED_MILLIS} ago. */
    public List<ConnectionInfo> snapshot() {
        long now = clock.getAsLong();
        List<Entry> held;
        synchronized (pruning) {
            prune(now);
            held = new ArrayList<>(entries);
        }
        List<ConnectionInfo> out = new ArrayList<>(held.size());
        for (Entry e : held) {
            out.add(e.info(now));
        }
        return out;
    }

    /** Entries currently held (open and recently closed). */
    public int size() {
        synchronized (pruning) {
            settle();
            return entries.size();
        }
    }

    /** Moves the entries added since the last walk to {@link #entries}, in the order they came; under {@link #pruning}. */
    private void settle() {
        Added a = ADDED.getAndSet(this, null);
        if (a == null) return;
        java.util.ArrayDeque<Entry> newest = new java.util.ArrayDeque<>();
        for (; a != null; a = a.next) newest.addFirst(a.entry);
        entries.addAll(newest);
    }

    private final Object pruning = new Object();

    /**
     * Drops closed entries older than {@link #KEEP_CLOSED_MILLIS}, and the oldest registered beyond
     * {@link #MAX_CLOSED}; one prune at a time (two at once would each drop the excess).
     */
    private void prune(long now) {
        synchronized (pruning) {
            settle();
            int closed = 0;
            for (Entry e : entries) {
                e.refreshClosed(now);
                if (e.closedAt != 0) closed++;
            }
            int excess = closed - MAX_CLOSED;
            // one pass that keeps the rest in order (removing from the middle of an ArrayDeque shifts it: many
            // open connections ahead of the closed ones made each removal cost the whole table)
            int n = entries.size();
            for (int i = 0; i < n; i++) {
                Entry e = entries.pollFirst();
                if (e.closedAt != 0 && (excess > 0 || now - e.closedAt > KEEP_CLOSED_MILLIS)) {
                    excess--;
                } else {
                    entries.addLast(e);
                }
            }
        }
    }

    private static final class Entry {
        final WeakReference<Socket> socket;
        final long id;
        final Side side;
        /** Text, or a socket address formatted by {@link #info} ({@link #text}). */
        final Object local;
        final Object remote;
        final String path;
        final String reason;
        /** Dropped at close (its mapped memory must not outlive the connection); the counts stay. */
        private volatile FastConnection connection;
        private volatile long sentAtClose = -1;
        private volatile long receivedAtClose = -1;
        final long createdAt;
        volatile long closedAt;

        Entry(WeakReference<Socket> socket, long id, Side side, Object local, Object remote, String path,
              String reason, FastConnection connection, long createdAt) {
            this.socket = socket;
            this.id = id;
            this.side = side;
            this.local = local;
            this.remote = remote;
            this.path = path;
            this.reason = reason;
            this.connection = connection;
            this.createdAt = createdAt;
        }

        void refreshClosed(long now) {
            if (closedAt == 0) {
                Socket s = socket.get();
                if (s == null || s.isClosed()) {
                    markClosed(now);
                }
            }
        }

        synchronized void markClosed(long now) {
            if (closedAt == 0) {
                closedAt = now;
            }
            FastConnection c = connection;
            if (c != null) {
                sentAtClose = c.bytesSent();
                receivedAtClose = c.bytesReceived();
                connection = null;
            }
        }

        ConnectionInfo info(long now) {
            FastConnection c = connection;
            long sent = c == null ? sentAtClose : c.bytesSent();
            long received = c == null ? receivedAtClose : c.bytesReceived();
            long end = closedAt == 0 ? now : closedAt;
            return new ConnectionInfo(id, side.label(), text(local), text(remote), path, reason == null ? "" : reason, sent,
                    received, Math.max(0, end - createdAt), closedAt == 0 ? "open" : "closed");
        }
    }
}
