package io.sora.agent;

import io.sora.agent.status.ConnectionRegistry;
import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.agent.status.DetachedConnections;
import io.sora.agent.status.WeakIdentityMap;
import io.sora.rules.Rule;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.ConnectionIds;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingResult;
import java.io.IOException;
import java.net.Socket;

/**
 * Where a connection's path, once decided, is recorded: the trace (the pairing attempt, then the
 * {@code path} event), the status registry, and for a paired socket its {@link PairedSocket}, from
 * which the socket's streams, shutdowns and close are served from then on.
 *
 * <p>The paired sockets are a side table by socket identity (retransformation cannot add fields),
 * weak and concurrent ({@link WeakIdentityMap}): every {@code Socket.close} in the JVM consults it,
 * and no close waits for another.
 */
final class PathRecorder {
    private final Tracer tracer;
    private final ConnectionRegistry registry;
    private final WeakIdentityMap<Socket, PairedSocket> paired = new WeakIdentityMap<>();
    /** Closes the fast path of a paired socket dropped unclosed; ended at detach ({@link #handOver}). */
    private final SocketCleaner cleaner = new SocketCleaner();
    /** Set by the detach's {@link #handOver}: a pairing recorded after it has nobody to serve its streams. */
    private volatile boolean handedOver;

    PathRecorder(Tracer tracer, ConnectionRegistry registry) {
        this.tracer = tracer;
        this.registry = registry;
    }

    /**
     * A pairing attempt begins (the trace's PAIR entry). The decisions run the attempt between this and
     * {@link #paired}, turning a runtime failure of it into {@link #failed}: a fallback with its reason,
     * never the application's exception. (No supplier to capture: a connection's set-up runs interpreted in
     * a cold JVM's first connections, where a lambda capture goes through its call site's method handles.)
     */
    void pairing(Side side, ConnectionKey key, Rule rule) {
        if (tracer.isOn(Category.NET)) {
            tracer.entry(Hook.PAIR_ENTRY, 0, (side == Side.SERVER ? "accept " : "connect ") + key + " rule=" + RuleTerms.where(rule));
        }
    }

    /** The attempt threw: it stays on TCP with this reason. */
    static PairingResult failed(RuntimeException e) {
        return new PairingResult.Fallback("pairing failed: " + e);
    }

    /** The attempt's end (traced); returns {@code result}. */
    PairingResult paired(PairingResult result) {
        if (tracer.isOn(Category.NET)) {
            long id = result instanceof PairingResult.Paired p ? p.connection().id() : 0;
            tracer.exit(Hook.PAIR_EXIT, id, result instanceof PairingResult.Paired ? 0 : -1, null);
        }
        return result;
    }

    /**
     * The path a pairing attempt decided: the fast connection, or TCP with the fallback's reason.
     * {@code key}: the connection's two ends as the pairing named them (client first).
     */
    void record(Socket socket, Side side, ConnectionKey key, Rule rule, PairingResult result) {
        // this end's addresses as the pairing knew them: no getsockname per connection (every plain client
        // of a server with an accept rule is recorded here too)
        java.net.InetSocketAddress local = side == Side.CLIENT ? key.client() : key.server();
        java.net.InetSocketAddress remote = side == Side.CLIENT ? key.server() : key.client();
        if (result instanceof PairingResult.Paired p) {
            FastConnection c = p.connection();
            PairedSocket ps = PairedSocket.register(socket, c, rule, tracer, cleaner);
            paired.put(socket, ps);
            if (handedOver) {
                // a pairing that finished after the detach's hand-over (it began before the bridge went): nothing
                // serves its streams any more, so its fast path closes at once (the peer sees the end) and the
                // socket is TCP, rather than each end waiting for the other's bytes (found in review, 2026-11-29)
                if (paired.remove(socket) != null) ps.cleanable.clean();
                tcp(socket, side, "sora detached while this connection was being paired", true, local, remote);
                return;
            }
            String reason = pairedReason(rule);
            registry.add(socket, c.id(), side, local, remote, c.path(), reason, c);
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.PATH, c.id(), c.path(), reason, "local=" + local + " remote=" + remote);
            }
        } else if (result instanceof PairingResult.Fallback f) {
            tcp(socket, side, f.reason(), true, local, remote);
        }
    }

    /** "paired (FILE:LINE)", made once per rule. */
    private static String pairedReason(Rule rule) {
        PairedReason last = lastPaired;
        if (last != null && last.rule == rule) return last.text;
        PairedReason r = new PairedReason(rule, "paired (" + RuleTerms.where(rule) + ")");
        lastPaired = r;
        return r.text;
    }

    /** A plain class: a record's generated methods would link ObjectMethods at start-up (NoGeneratedRecordMethodsTest). */
    private static final class PairedReason {
        final Rule rule;
        final String text;

        PairedReason(Rule rule, String text) {
            this.rule = rule;
            this.text = text;
        }
    }

    private static volatile PairedReason lastPaired;

    /**
     * A connection left on TCP. {@code matched}: a rule named it (it is registered for the status view);
     * connections no rule names are only traced, and get an id only then.
     */
    void tcp(Socket socket, Side side, String reason, boolean matched) {
        tcp(socket, side, reason, matched, null, null);
    }

    /** As {@link #tcp(Socket, Side, String, boolean)}, with the socket's addresses when known (null: asked of the socket). */
    private void tcp(Socket socket, Side side, String reason, boolean matched, java.net.SocketAddress local,
                     java.net.SocketAddress remote) {
        boolean traced = tracer.isOn(Category.NET);
        if (!matched && !traced) {
            return;
        }
        if (local == null || remote == null) {
            local = socket.getLocalSocketAddress();
            remote = socket.getRemoteSocketAddress();
        }
        long id = ConnectionIds.next();
        if (matched) {
            registry.add(socket, id, side, local, remote, "tcp", reason, null);
        }
        if (traced) {
            tracer.event(Hook.PATH, id, "tcp", reason, "local=" + local + " remote=" + remote);
        }
    }

    /** The socket's fast path, or null when its bytes go over TCP (or its path is not decided yet). */
    PairedSocket paired(Socket socket) {
        return paired.get(socket);
    }

    /** The application closed the socket: its registry entry is closed, its fast path too. */
    void closed(Socket socket) {
        registry.closed(socket);
        PairedSocket p = paired.remove(socket);
        if (p != null) {
            p.cleanable.clean();
        }
    }

    /**
     * Detach: every paired socket whose application holds both streams goes to {@code left}, which closes
     * its fast path when the application closes it (or drops it: the watcher sees a collected socket too);
     * the others' fast paths close now; a pairing recorded later closes at once; the cleaner's thread ends.
     */
    int handOver(DetachedConnections<PairedSocket> left) {
        handedOver = true;
        // a paired socket whose application has not yet taken both streams would get the TCP socket's for
        // the one it asks for later, on which the peer sends nothing: both ends would wait for ever. Its fast
        // path closes now instead (the peer reads the end, its writes fail), a visible end (found in
        // review, 2026-11-29: an accepted socket queued to a worker when the detach came)
        java.util.List<Socket> reset = new java.util.ArrayList<>();
        paired.drain((socket, p) -> {
            if (p.bothStreamsTaken()) {
                left.add(socket, p);
            } else {
                // a peer that moved its bytes to TCP (docs/shm.md, "Buffering") left the ones before the move in
                // the ring: the TCP stream the application asks for later would start after them. A reset
                // instead, as loud as the cut is for the peer (found in review, 2026-11-29). Looked at before
                // the close too: after it, a kept segment may already serve the next connection
                io.sora.transport.RingConnection rc = p.connection instanceof io.sora.transport.RingConnection r ? r : null;
                boolean moved = rc != null && rc.inputStream().peerMoved();
                p.cleanable.clean();
                if (moved || (rc != null && rc.inputStream().peerMoved())) reset.add(socket);
            }
        });
        for (Socket s : reset) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (java.io.IOException e) {
                // closed already: nothing reads it
            }
        }
        cleaner.close();
        return left.size();
    }

    /** Closes a fast connection (best effort) and traces its end with its byte counts. */
    static void close(FastConnection c, Tracer tracer) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is best effort; the peer sees the control channel close
        }
        if (tracer.isOn(Category.NET)) {
            String moved = "";
            if (c instanceof io.sora.transport.RingConnection r) {
                // a direction moved to TCP (both ends blocked writing: docs/shm.md, "Buffering") says so at the end too
                if (r.outputStream().onTcp()) moved += " (sending by TCP since both ends waited on full rings)";
                if (r.inputStream().onTcp()) moved += " (receiving by TCP since the peer moved)";
            }
            tracer.event(Hook.CONN_CLOSE, c.id(), c.path(), null, "sent=" + c.bytesSent() + " received=" + c.bytesReceived() + moved);
        }
    }
}
