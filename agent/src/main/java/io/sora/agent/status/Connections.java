package io.sora.agent.status;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * The agent's {@link ConnectionsMXBean}: reads the {@link ConnectionRegistry} and the fast paths'
 * availability when asked, and hands {@link #detach()} to the agent. Thread-safe.
 */
public final class Connections implements ConnectionsMXBean {
    private final ConnectionRegistry registry;
    private final Supplier<List<FastPathInfo>> fastPaths;
    private final List<String> problems;
    private final String agentOptions;
    private final boolean hotAttached;
    private final long startTimeMillis;
    private final String version;
    private final java.util.function.IntSupplier detach;
    private final Supplier<List<String>> unserved;

    /**
     * @param problems start-up problems; copied
     * @param detach   what {@link #detach()} runs (the agent's stop), giving how many connections keep their fast path; must be idempotent
     */
    public Connections(ConnectionRegistry registry, Supplier<List<FastPathInfo>> fastPaths, List<String> problems,
                       String agentOptions, boolean hotAttached, long startTimeMillis, String version, java.util.function.IntSupplier detach) {
        this(registry, fastPaths, problems, agentOptions, hotAttached, startTimeMillis, version, detach, List::of);
    }

    /** @param unserved what {@link #getUnservedApis()} reports, as found so far */
    public Connections(ConnectionRegistry registry, Supplier<List<FastPathInfo>> fastPaths, List<String> problems,
                       String agentOptions, boolean hotAttached, long startTimeMillis, String version, java.util.function.IntSupplier detach,
                       Supplier<List<String>> unserved) {
        this.unserved = Objects.requireNonNull(unserved, "unserved");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.fastPaths = Objects.requireNonNull(fastPaths, "fastPaths");
        this.problems = List.copyOf(problems);
        this.agentOptions = agentOptions == null ? "" : agentOptions;
        this.hotAttached = hotAttached;
        this.startTimeMillis = startTimeMillis;
        this.version = version == null ? "unknown" : version;
        this.detach = Objects.requireNonNull(detach, "detach");
    }

    /** The object name {@value ConnectionsMXBean#OBJECT_NAME}. */
    public static ObjectName objectName() {
        try {
            return new ObjectName(OBJECT_NAME);
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(OBJECT_NAME, e);
        }
    }

    /**
     * Registers this bean in the platform MBean server.
     *
     * @throws JMException when it cannot (for instance another sora bean is registered already)
     */
    public void register() throws JMException {
        register(ManagementFactory.getPlatformMBeanServer());
    }

    /**
     * Registers this bean in {@code server} (the platform server, as it is being handed out).
     *
     * @throws JMException when it cannot (for instance another sora bean is registered already)
     */
    public void register(MBeanServer server) throws JMException {
        try {
            server.registerMBean(this, objectName());
        } catch (InstanceAlreadyExistsException e) {
            throw new InstanceAlreadyExistsException(OBJECT_NAME + " is registered already: another sora agent runs in this JVM");
        }
    }

    /** Unregisters the bean if it is registered; never throws. */
    public static void unregister() {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName());
        } catch (InstanceNotFoundException e) {
            // not registered (never was, or detached already)
        } catch (JMException e) {
            // a registered bean we cannot remove: nothing better to do than leave it
        }
    }

    @Override
    public List<ConnectionInfo> getConnections() {
        return registry.snapshot();
    }

    @Override
    public List<FastPathInfo> getFastPaths() {
        return fastPaths.get();
    }

    @Override
    public List<String> getProblems() {
        return problems;
    }

    @Override
    public List<String> getUnservedApis() {
        return List.copyOf(unserved.get());
    }

    @Override
    public String getAgentOptions() {
        return agentOptions;
    }

    @Override
    public boolean isHotAttached() {
        return hotAttached;
    }

    @Override
    public long getStartTimeMillis() {
        return startTimeMillis;
    }

    @Override
    public String getVersion() {
        return version;
    }

    @Override
    public int detach() {
        return detach.getAsInt();
    }
}
