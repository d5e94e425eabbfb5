package io.sora.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.Reference;
import java.net.Socket;

/**
 * The streams an application gets for a paired socket (inside the JDK's own socket streams, which the
 * socket caches): the fast connection's streams, each holding its socket strongly, as a TCP socket's own
 * streams do, and the socket's TCP stream, where a direction may move (which the fast connection's
 * stream holds weakly, and which nothing else holds once the JDK's wrapper wraps sora's stream: the
 * impl makes a new one per call). Nothing else in the agent holds a paired
 * socket strongly (the side table is weak, the fast connection's hooks are weak), so a socket the
 * application drops without closing becomes unreachable once its streams are too, and the
 * {@link SocketCleaner} registration for it closes the fast path, as the JDK closes an
 * unreachable TCP socket's file descriptor. A read or write keeps its stream, and so the socket,
 * reachable until it returns ({@link Reference#reachabilityFence}): an application whose last use of a
 * socket is a read that waits (a thread reading an idle connection, nothing else holding the socket)
 * must not have the socket collected, and the connection closed, under that read. Found in review,
 * 2026-11-29; no test (it depends on the JIT's liveness analysis and a collection at that moment).
 */
final class PinnedStreams {
    private PinnedStreams() {
    }

    static final class In extends InputStream {
        private final InputStream in;
        @SuppressWarnings({"unused", "FieldCanBeLocal"}) // reachability only
        private final Socket pin;
        /** The socket's TCP stream, which the fast path's stream holds only weakly (reachability only). */
        @SuppressWarnings({"unused", "FieldCanBeLocal"})
        private final InputStream tcp;

        In(InputStream in, Socket pin, InputStream tcp) {
            this.in = in;
            this.pin = pin;
            this.tcp = tcp;
        }

        @Override
        public int read() throws IOException {
            try {
                return in.read();
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return in.read(b, off, len);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public long skip(long n) throws IOException {
            try {
                return in.skip(n);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    static final class Out extends OutputStream {
        private final OutputStream out;
        @SuppressWarnings({"unused", "FieldCanBeLocal"}) // reachability only
        private final Socket pin;
        /** As {@link In}'s. */
        @SuppressWarnings({"unused", "FieldCanBeLocal"})
        private final OutputStream tcp;

        Out(OutputStream out, Socket pin, OutputStream tcp) {
            this.out = out;
            this.pin = pin;
            this.tcp = tcp;
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }
}
