package io.sora.it.semantics;

import java.lang.reflect.Method;
import java.net.Socket;

/** Asks the agent (through its bootstrap bridge, the only sora class an application can see) for a socket's path. */
final class SoraPath {
    private SoraPath() {
    }

    static String of(java.nio.channels.SocketChannel c) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            Method m = bridge.getMethod("pathOf", java.nio.channels.SocketChannel.class);
            return (String) m.invoke(null, c);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the sora agent is not attached to this test JVM: " + e, e);
        }
    }

    static String of(Socket s) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            Method m = bridge.getMethod("pathOf", Socket.class);
            return (String) m.invoke(null, s);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the sora agent is not attached to this test JVM: " + e, e);
        }
    }
}
