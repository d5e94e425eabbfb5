package io.sora.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/**
 * The streams an application gets for a paired socket: the fast connection's streams, each holding
 * its socket strongly, as a TCP socket's own streams do. Nothing else in the agent holds a paired
 * socket strongly (the side table is weak, the fast connection's hooks are weak), so a socket the
 * application drops without closing becomes unreachable once its streams are too, and the
 * {@link SocketCleaner} registration for it closes the fast path, as the JDK closes an
 * unreachable TCP socket's file descriptor.
 */
final class PinnedStreams {
    private PinnedStreams() {
    }

    static final class In extends InputStream {
        private final InputStream in;
        @SuppressWarnings({"unused", "FieldCanBeLocal"}) // reachability only
        private final Socket pin;

        In(InputStream in, Socket pin) {
            this.in = in;
            this.pin = pin;
        }

        @Override
        public int read() throws IOException {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public long skip(long n) throws IOException {
            return in.skip(n);
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

        Out(OutputStream out, Socket pin) {
            this.out = out;
            this.pin = pin;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
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
