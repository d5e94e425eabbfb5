package io.sora.transport;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** Socket hooks for tests: a settable SO_TIMEOUT, and closeSocket closes the connection it is bound to. */
final class TestHooks implements SocketHooks {
    volatile int soTimeout;
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
