package io.sora.agent;

import java.net.ServerSocket;
import java.net.Socket;

/**
 * Which socket classes sora pairs: {@code java.net.Socket} and {@code ServerSocket} themselves, and the
 * JDK's own TLS sockets ({@code sun.security.ssl.SSLSocketImpl}, {@code SSLServerSocketImpl}), whose
 * records go through the plain socket's streams they inherit ({@code super.getInputStream()} once
 * connected or accepted), its shutdowns and its close, each of which sora serves. Other subclasses may
 * read or write past those streams (their own impl, a native library), and a paired connection whose
 * bytes went to TCP anyway would lose data: they stay on TCP, and that is said ({@code UnservedApis}).
 * Both TLS classes are final, so the name is the whole test.
 */
final class ServedSockets {
    static final String TLS_SOCKET = "sun.security.ssl.SSLSocketImpl";
    static final String TLS_SERVER_SOCKET = "sun.security.ssl.SSLServerSocketImpl";

    private ServedSockets() {
    }

    /** Whether a socket of this class is paired where a rule says. */
    static boolean socket(Class<?> type) {
        return type == Socket.class || type.getName().equals(TLS_SOCKET);
    }

    /** Whether a server socket of this class gets a listener where a rule says. */
    static boolean serverSocket(Class<?> type) {
        return type == ServerSocket.class || type.getName().equals(TLS_SERVER_SOCKET);
    }
}
