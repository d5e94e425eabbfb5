package io.sora.transport.shm;

import io.sora.transport.FastConnection;
import io.sora.transport.SocketHooks;
import java.io.IOException;

/** Socket hooks for tests: a settable SO_TIMEOUT; closeSocket closes the connection bound to it. */
final class TestHooks implements SocketHooks {
    volatile int soTimeout;
    volatile FastConnection connection;

    @Override
    public int soTimeoutMillis() {
        return soTimeout;
    }

    @Override
    public void closeSocket() throws IOException {
        FastConnection c = connection;
        if (c != null) c.close();
    }
}
