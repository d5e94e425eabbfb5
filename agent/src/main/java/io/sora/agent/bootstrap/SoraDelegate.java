package io.sora.agent.bootstrap;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;

/**
 * What the instrumented {@code java.net} methods call, implemented inside the agent class loader.
 * JDK types only. Implementations never throw: the facade guards anyway.
 */
public interface SoraDelegate {
    /** Before the TCP connect of {@code socket} to {@code endpoint}. */
    default void connecting(Socket socket, SocketAddress endpoint) {
    }

    /** The TCP connect that {@link #connecting} preceded failed. */
    default void connectFailed(Socket socket) {
    }

    void connected(Socket socket);

    InputStream inputStream(Socket socket, InputStream tcp);

    OutputStream outputStream(Socket socket, OutputStream tcp);

    void shutdownInput(Socket socket);

    void shutdownOutput(Socket socket);

    void closed(Socket socket);

    void bound(ServerSocket server);

    void accepted(ServerSocket server, Socket socket);

    void serverClosed(ServerSocket server);

    /** Method trace: {@code mtId} is the mt hook id, {@code exit} false for entry. */
    void methodTrace(int mtId, boolean exit, Object self, Throwable thrown);

    /** The path carrying a socket's bytes: "shm", "rdma" or "tcp". */
    String pathOf(Socket socket);
}
