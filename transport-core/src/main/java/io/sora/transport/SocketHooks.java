package io.sora.transport;

import java.io.IOException;

/**
 * What a fast connection needs from the application's {@code java.net.Socket}: its current
 * {@code SO_TIMEOUT} (read as each read begins, as the JDK's reads take it: a {@code setSoTimeout} is the
 * next read's) and a
 * way to close it (closing either stream of a socket closes the socket, as on TCP).
 */
public interface SocketHooks {
    /** The socket's SO_TIMEOUT in milliseconds, 0 meaning wait forever. */
    int soTimeoutMillis() throws IOException;

    /** Closes the application socket (which in turn closes the fast connection). */
    void closeSocket() throws IOException;

    /**
     * The socket's TCP connection, for a pairing's proof of ownership ({@link TcpConnection}); null where
     * it cannot be reached (the medium then does not pair).
     */
    default TcpConnection tcp() {
        return null;
    }
}
