package io.sora.agent.status;

import java.util.List;

/**
 * The JMX view of a sora agent, registered as {@value #OBJECT_NAME} in the platform MBean server while
 * the agent runs (and unregistered by detach), so {@code sora status}, JConsole, VisualVM or any JMX
 * collector can read it. Attribute values are open types: {@code Connections} and {@code FastPaths} are
 * arrays of {@code CompositeData} whose items are the getters of {@link ConnectionInfo} and
 * {@link FastPathInfo}.
 *
 * <p>Thread-safe: attributes are snapshots taken when read.
 */
public interface ConnectionsMXBean {
    /** The bean's object name. */
    String OBJECT_NAME = "io.sora:type=Connections";

    /** Connections a rule matched, open ones and those closed in the last half minute, oldest first. */
    List<ConnectionInfo> getConnections();

    /** Each fast path of this JVM and whether it can be used. */
    List<FastPathInfo> getFastPaths();

    /** Problems found at start-up (configuration errors, ...), empty when there were none. */
    List<String> getProblems();

    /**
     * APIs this JVM uses that sora cannot serve (Netty's native transports, asynchronous socket
     * channels), each with the fix: their connections stay on TCP whatever the rules say. Empty when none
     * was seen (or no rule could pair anything).
     */
    List<String> getUnservedApis();

    /** The agent argument string the agent was started with ("" when none). */
    String getAgentOptions();

    /** True when loaded into the running JVM (attach), false when started with -javaagent. */
    boolean isHotAttached();

    /** When the agent started, in milliseconds since the epoch. */
    long getStartTimeMillis();

    /** The agent's version. */
    String getVersion();

    /**
     * Detaches the agent: new connections use plain TCP; connections already on a fast path whose
     * application holds both streams keep it until they close, the others (channels, sockets whose
     * streams were not both taken) are closed. The bean is gone when this returns. Idempotent.
     *
     * @return how many connections keep their fast path (0 when the agent was detached already)
     */
    int detach();
}
