package io.sora.agent;

import io.sora.rules.Rule;
import io.sora.trace.Tracer;
import io.sora.transport.FastConnection;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.WeakReference;
import java.net.Socket;

/**
 * A paired socket's state. Holds nothing that reaches the socket strongly (see {@link PinnedStreams}).
 * {@code cleanable} closes the fast path exactly once: on {@code Socket.close}, at detach, or when
 * the socket became unreachable without being closed.
 */
final class PairedSocket {
    final FastConnection connection;
    final Rule rule;
    final SocketCleaner.Cleanable cleanable;
    private WeakReference<InputStream> in = new WeakReference<>(null);
    private WeakReference<OutputStream> out = new WeakReference<>(null);
    /** Whether the application was ever given this socket's input (output) stream; guarded by this. */
    private boolean inTaken;
    private boolean outTaken;

    private PairedSocket(FastConnection connection, Rule rule, SocketCleaner.Cleanable cleanable) {
        this.connection = connection;
        this.rule = rule;
        this.cleanable = cleanable;
    }

    FastConnection connection() {
        return connection;
    }

    /**
     * The same stream object while the application holds it, as TCP's getInputStream. {@code tcp}, the
     * socket's own stream, is read after the peer moved its bytes to TCP (both ends blocked writing into
     * full rings: docs/shm.md, "Buffering"); null: never.
     */
    synchronized InputStream in(Socket socket, InputStream tcp) {
        InputStream s = in.get();
        if (s == null) {
            InputStream ring = connection.inputStream();
            if (tcp != null && ring instanceof io.sora.transport.RingInputStream r) r.tcpFallback(tcp);
            s = new PinnedStreams.In(ring, socket, tcp);
            in = new WeakReference<>(s);
            inTaken = true;
        }
        return s;
    }

    /** As {@link #in}: {@code tcp} takes this end's bytes if both ends come to wait on full rings. */
    synchronized OutputStream out(Socket socket, OutputStream tcp) {
        OutputStream s = out.get();
        if (s == null) {
            OutputStream ring = connection.outputStream();
            if (tcp != null && ring instanceof io.sora.transport.RingOutputStream r) r.tcpFallback(tcp);
            s = new PinnedStreams.Out(ring, socket, tcp);
            out = new WeakReference<>(s);
            outTaken = true;
        }
        return s;
    }

    /**
     * Whether the application was given both streams: after a detach only those keep the fast path (a
     * stream asked for later is the TCP socket's, on which the peer sends nothing).
     */
    synchronized boolean bothStreamsTaken() {
        return inTaken && outTaken;
    }

    /**
     * Whether {@code socket}'s {@code SO_LINGER} is on with 0 seconds, which makes its TCP close a reset
     * (false when that cannot be read: closed already). Read as its close begins, so every way of
     * setting it counts: {@code setSoLinger}, {@code setOption}, a channel's adaptor.
     */
    static boolean lingersZero(Socket socket) {
        try {
            return socket.getSoLinger() == 0;
        } catch (java.net.SocketException closed) {
            return false;
        }
    }

    /** The close action registered with the cleaner; captures no socket. */
    private static Runnable closer(FastConnection c, Tracer tracer) {
        return new Closer(c, tracer);
    }

    /** A class, not a lambda: made with every paired socket, interpreted in a cold JVM's first connections. */
    private static final class Closer implements Runnable {
        private final FastConnection c;
        private final Tracer tracer;

        Closer(FastConnection c, Tracer tracer) {
            this.c = c;
            this.tracer = tracer;
        }

        @Override
        public void run() {
            PathRecorder.close(c, tracer);
        }
    }

    /** Pairs the state with its socket: {@code cleaner} closes the fast path if the socket is dropped unclosed. */
    static PairedSocket register(Socket socket, FastConnection c, Rule rule, Tracer tracer, SocketCleaner cleaner) {
        // a socket's reads, whenever they come, are its streams' (never a channel's: an adaptor has its channel),
        // and they follow the peer's move to TCP: said now, before the application has the socket
        if (socket.getChannel() == null && c instanceof io.sora.transport.RingConnection rc) rc.inputStream().offerTcpFollow();
        return new PairedSocket(c, rule, cleaner.register(socket, closer(c, tracer)));
    }

    /**
     * The hooks of sockets that pair (or tried to), by socket, for {@link #soTimeoutSet}; weak keys, and
     * the values hold their sockets weakly.
     */
    private static final io.sora.agent.status.WeakIdentityMap<Socket, Hooks> HOOKS = new io.sora.agent.status.WeakIdentityMap<>();

    /**
     * A fast connection's view of its socket. Holds the socket weakly: the fast connection must not keep
     * its socket reachable (see {@link PinnedStreams}). The read timeout is a copy, kept current by
     * {@code Socket.setSoTimeout}'s hook ({@link #soTimeoutSet}): on JDK 17 {@code getSoTimeout()} is
     * {@code synchronized} on the socket, and a read about to wait that called it waited for whoever held
     * the socket's monitor (a writer that serialises its messages with {@code synchronized (socket)},
     * itself blocked on a full ring: with the peer doing the same, neither drained), where a TCP read
     * never takes it (found in review, 2026-11-29).
     */
    static final class Hooks implements SocketHooks {
        private final WeakReference<Socket> ref;
        private volatile int soTimeout;

        private Hooks(Socket socket) {
            ref = new WeakReference<>(socket);
        }

        @Override
        public int soTimeoutMillis() {
            return soTimeout;
        }

        @Override
        public void closeSocket() throws IOException {
            Socket s = ref.get();
            if (s != null) {
                s.close();
            }
        }

        /** The socket's TCP connection through its descriptor (an RDMA pairing's proof); null when out of reach. */
        @Override
        public io.sora.transport.TcpConnection tcp() {
            Socket s = ref.get();
            return s == null ? null : io.sora.transport.NativeTcp.of(s);
        }
    }

    /** The hooks for {@code socket}, its timeout read now: a {@code setSoTimeout} from here on updates it. */
    static SocketHooks hooks(Socket socket) {
        Hooks h = new Hooks(socket);
        HOOKS.put(socket, h); // before the read below: a setSoTimeout in between finds it and updates it
        try {
            h.soTimeout = socket.getSoTimeout();
        } catch (IOException closed) {
            // closed meanwhile: its reads fail before they wait
        }
        return h;
    }

    /** {@code Socket.setSoTimeout} returned on {@code socket} (its monitor held, on JDK 17): the copy follows. */
    static void soTimeoutSet(Socket socket) {
        Hooks h = HOOKS.get(socket);
        if (h == null) return;
        try {
            h.soTimeout = socket.getSoTimeout();
        } catch (IOException closed) {
            // closed meanwhile: no read will wait
        }
    }

    /** {@code socket} closed: its hooks leave the table. */
    static void forget(Socket socket) {
        HOOKS.remove(socket);
    }
}
