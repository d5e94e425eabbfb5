package io.sora.transport;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * One paired fast-path connection: the byte streams that replace a socket's TCP streams.
 * Socket semantics hold exactly as on TCP (blocking reads return what is there, SO_TIMEOUT gives
 * {@link java.net.SocketTimeoutException} and leaves the stream usable, half-close, close from either
 * side, one reader and one writer thread at once, a peer that dies surfaces as EOF or IOException).
 *
 * <p>Thread safety: one reader thread and one writer thread may use the streams at once; close,
 * shutdownInput and shutdownOutput may be called from any thread.
 */
public interface FastConnection extends Closeable {
    /** Process-unique id, as used in trace events ({@code conn}). */
    long id();

    /** The medium's name: {@code "shm"} or {@code "rdma"}. */
    String path();

    /** The same instance on every call. */
    InputStream inputStream();

    /** The same instance on every call. Writes are not buffered: each is visible to the peer on return. */
    OutputStream outputStream();

    /** After this, reads return EOF (-1); bytes the peer sends are discarded, as on TCP. */
    void shutdownInput() throws IOException;

    /** The peer reads EOF after the bytes already written; the other direction still works. */
    void shutdownOutput() throws IOException;

    /** Idempotent. Blocked readers and writers on this side return (with an IOException). */
    @Override
    void close() throws IOException;

    /**
     * The close that follows is abortive, as a TCP close with {@code SO_LINGER} 0 (a reset): the peer
     * reads what was sent before it, then gets "Connection reset" instead of the end of the stream, and
     * its writes fail. Called as the application closes a socket whose linger is 0.
     */
    default void resetOnClose() {
    }

    long bytesSent();

    long bytesReceived();
}
