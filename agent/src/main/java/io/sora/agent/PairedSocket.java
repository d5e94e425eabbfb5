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

    private PairedSocket(FastConnection connection, Rule rule, SocketCleaner.Cleanable cleanable) {
        this.connection = connection;
        this.rule = rule;
        this.cleanable = cleanable;
    }

    FastConnection connection() {
        return connection;
    }

    /** The same stream object while the application holds it, as TCP's getInputStream. */
    synchronized InputStream in(Socket socket) {
        InputStream s = in.get();
        if (s == null) {
            s = new PinnedStreams.In(connection.inputStream(), socket);
            in = new WeakReference<>(s);
        }
        return s;
    }

    synchronized OutputStream out(Socket socket) {
        OutputStream s = out.get();
        if (s == null) {
            s = new PinnedStreams.Out(connection.outputStream(), socket);
            out = new WeakReference<>(s);
        }
        return s;
    }

    /** The close action registered with the cleaner; captures no socket. */
    private static Runnable closer(FastConnection c, Tracer tracer) {
        return () -> PathRecorder.close(c, tracer);
    }

    /** Pairs the state with its socket: {@code cleaner} closes the fast path if the socket is dropped unclosed. */
    static PairedSocket register(Socket socket, FastConnection c, Rule rule, Tracer tracer, SocketCleaner cleaner) {
        return new PairedSocket(c, rule, cleaner.register(socket, closer(c, tracer)));
    }

    /** Holds the socket weakly: the fast connection must not keep its socket reachable (see {@link Paired}). */
    static SocketHooks hooks(Socket socket) {
        WeakReference<Socket> ref = new WeakReference<>(socket);
        return new SocketHooks() {
            @Override
            public int soTimeoutMillis() throws IOException {
                Socket s = ref.get();
                return s == null ? 0 : s.getSoTimeout();
            }

            @Override
            public void closeSocket() throws IOException {
                Socket s = ref.get();
                if (s != null) {
                    s.close();
                }
            }
        };
    }
}
