package io.sora.it.apps;

import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;

/**
 * A channel's path as the agent decided it, asked of its bootstrap bridge (the only sora class an
 * application can see), for the forked peer programs: {@code no-agent} in a JVM without the agent.
 */
public final class BridgePath {
    private BridgePath() {
    }

    public static String of(SocketChannel ch) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            Method m = bridge.getMethod("pathOf", SocketChannel.class);
            return (String) m.invoke(null, ch);
        } catch (ReflectiveOperationException e) {
            return "no-agent";
        }
    }
}
