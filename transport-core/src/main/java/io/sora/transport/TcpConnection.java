package io.sora.transport;

import java.io.IOException;

/**
 * The TCP connection under an application's socket, as a pairing's proof of ownership uses it: the
 * client writes a secret the server sent it over the fast medium on the TCP connection itself, which
 * only the connection's owner can do; the server looks at the front of what it received without taking
 * it, and takes the proof only when it is there (docs/rdma.md, "Proof of the TCP connection").
 */
public interface TcpConnection {
    /**
     * Writes all of {@code bytes} (at most 256) on the connection, before any byte of the application's;
     * {@link PartlyWritten} when it failed after some of them.
     */
    void write(byte[] bytes) throws IOException;

    /**
     * Copies up to {@code into.length} (at most 256) bytes from the front of what was received, without
     * taking them, after waiting at most {@code millis} until {@code atLeast} (1 to {@code into.length}) of
     * them are there or the stream ended.
     *
     * @return the count copied (0: none yet), -1 at the end of the stream with nothing received
     */
    int peek(byte[] into, int atLeast, int millis) throws IOException;

    /** {@link #write} failed after some of the bytes went out: they are on the connection. */
    final class PartlyWritten extends IOException {
        public final int written;

        public PartlyWritten(int written, int of) {
            super("the TCP connection failed after " + written + " of " + of + " bytes");
            this.written = written;
        }
    }

    /** Whether the peer's end of the stream (or a reset) was seen by the last {@link #peek}: no more bytes come. */
    boolean ended();

    /** Takes the first {@code n} bytes, which {@link #peek} showed. */
    void discard(int n) throws IOException;

    /** Shuts both directions down: the application reads the end of the stream, its peer too. */
    void shutdown();

    /**
     * The inode of the connection's socket ({@link NativeSockets#tcpState} gives the same one), which tells
     * this connection from a later one reusing its four-tuple; -1 when it cannot be had.
     */
    long inode();
}
