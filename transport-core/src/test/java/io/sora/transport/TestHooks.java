package io.sora.transport;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Socket hooks for tests: a settable SO_TIMEOUT, closeSocket closes the connection it is bound to, and
 * the TCP connection of a real socket when made with one.
 */
public final class TestHooks implements SocketHooks {
    volatile int soTimeout;
    /** The TCP socket whose connection {@link #tcp} is (an RDMA pairing's proof); null: none. */
    private final java.net.Socket socket;

    public TestHooks() {
        this(null);
    }

    public TestHooks(java.net.Socket socket) {
        this.socket = socket;
    }

    @Override
    public TcpConnection tcp() {
        return socket == null ? null : NativeTcp.of(socket);
    }
    volatile FastConnection connection;
    final AtomicInteger closeSocketCalls = new AtomicInteger();

    @Override
    public int soTimeoutMillis() {
        return soTimeout;
    }

    @Override
    public void closeSocket() throws IOException {
        closeSocketCalls.incrementAndGet();
        FastConnection c = connection;
        if (c != null) c.close();
    }
}
