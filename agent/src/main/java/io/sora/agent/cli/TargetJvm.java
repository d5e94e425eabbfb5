package io.sora.agent.cli;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import io.sora.agent.status.Connections;
import io.sora.agent.status.ConnectionsMXBean;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * A running JVM reached through the attach API, and its platform MBean server through the JDK's local
 * management agent (started on demand; it listens on no network port). Not thread-safe; close it.
 */
final class TargetJvm implements AutoCloseable {
    private final long pid;
    private final VirtualMachine vm;
    private JMXConnector connector;
    private MBeanServerConnection mbeans;

    private TargetJvm(long pid, VirtualMachine vm) {
        this.pid = pid;
        this.vm = vm;
    }

    /** Parses a pid argument. */
    static long parsePid(String s) throws CliException {
        try {
            long pid = Long.parseLong(s.trim());
            if (pid > 0) {
                return pid;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw CliException.usage("pid must be a positive integer, found '" + s + "'");
    }

    /**
     * Attaches after the {@code /proc} checks.
     *
     * @throws CliException naming why the JVM cannot be reached
     */
    static TargetJvm attach(long pid) throws CliException {
        if (pid == ProcessHandle.current().pid()) {
            throw CliException.usage("pid " + pid + " is this tool's own JVM");
        }
        ProcessCheck.system().check(pid);
        try {
            return new TargetJvm(pid, VirtualMachine.attach(Long.toString(pid)));
        } catch (AttachNotSupportedException e) {
            throw new CliException(CliException.FAILED, "cannot attach to JVM " + pid + ": " + e.getMessage()
                    + " (a JVM still starting, or one started with -XX:+DisableAttachMechanism, does not answer)", e);
        } catch (IOException | SecurityException e) {
            throw new CliException(CliException.FAILED, "cannot attach to JVM " + pid + ": " + e, e);
        }
    }

    long pid() {
        return pid;
    }

    /** The target's system properties. */
    Properties systemProperties() throws CliException {
        try {
            return vm.getSystemProperties();
        } catch (IOException e) {
            throw new CliException(CliException.FAILED, "cannot read the system properties of JVM " + pid + ": " + e, e);
        }
    }

    /** The target's Java feature version (8, 11, 17, 25, ...). */
    int javaFeature() throws CliException {
        String spec = systemProperties().getProperty("java.specification.version", "0");
        String major = spec.startsWith("1.") ? spec.substring(2) : spec;
        try {
            return Integer.parseInt(major.split("\\.")[0]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The target's platform MBean server (starts the local management agent the first time). */
    MBeanServerConnection mbeans() throws CliException {
        if (mbeans == null) {
            try {
                String url = vm.startLocalManagementAgent();
                connector = JMXConnectorFactory.connect(new JMXServiceURL(url));
                mbeans = connector.getMBeanServerConnection();
            } catch (IOException | SecurityException e) {
                throw new CliException(CliException.FAILED, "cannot reach the MBean server of JVM " + pid + ": " + e, e);
            }
        }
        return mbeans;
    }

    /** Whether a sora agent is registered ({@value ConnectionsMXBean#OBJECT_NAME}). */
    boolean soraAttached() throws CliException {
        try {
            return mbeans().isRegistered(Connections.objectName());
        } catch (IOException e) {
            throw new CliException(CliException.FAILED, "cannot query JVM " + pid + ": " + e, e);
        }
    }

    /**
     * For commands that need a running sora: {@code args} must be exactly one pid, the JVM must be
     * attachable and have sora attached, else the matching usage or failure is thrown.
     */
    static TargetJvm attachToSora(java.util.List<String> args) throws CliException {
        if (args.size() != 1) {
            throw CliException.usage(args.isEmpty() ? "missing <pid>" : "too many arguments " + args.subList(1, args.size()));
        }
        long pid = parsePid(args.get(0));
        TargetJvm target = attach(pid);
        if (!target.soraAttached()) {
            target.close();
            throw CliException.failed("sora is not attached to " + pid);
        }
        return target;
    }

    /** The connection table of the sora MBean. */
    java.util.List<io.sora.agent.status.ConnectionInfo> connections() throws CliException {
        java.util.List<io.sora.agent.status.ConnectionInfo> rows = new java.util.ArrayList<>();
        for (CompositeData d : (CompositeData[]) sora("Connections")) {
            rows.add(io.sora.agent.status.ConnectionInfo.from(d));
        }
        return rows;
    }

    /** An attribute of the sora bean. */
    Object sora(String attribute) throws CliException {
        try {
            return mbeans().getAttribute(Connections.objectName(), attribute);
        } catch (JMException | IOException e) {
            throw new CliException(CliException.FAILED, "cannot read " + attribute + " of " + ConnectionsMXBean.OBJECT_NAME
                    + " in JVM " + pid + ": " + e, e);
        }
    }

    /** Calls the sora bean's {@code detach()}. */
    /** @return what the agent's detach returned: how many connections keep their fast path (null from older builds) */
    Object detachSora() throws CliException {
        try {
            return mbeans().invoke(Connections.objectName(), "detach", null, null);
        } catch (JMException | IOException e) {
            throw new CliException(CliException.FAILED, "detach failed in JVM " + pid + ": " + e, e);
        }
    }

    /** A HotSpot flag as {@code value/origin} (e.g. {@code true/DEFAULT}), or null when it cannot be read. */
    String vmOption(String name) {
        try {
            Object r = mbeans().invoke(new ObjectName("com.sun.management:type=HotSpotDiagnostic"), "getVMOption",
                    new Object[] {name}, new String[] {String.class.getName()});
            return r instanceof CompositeData d ? d.get("value") + "/" + d.get("origin") : null;
        } catch (JMException | IOException | CliException | RuntimeException e) {
            return null;
        }
    }

    /** Loads the agent jar with {@code options} (agentmain runs before this returns). */
    void loadAgent(Path agentJar, String options) throws CliException {
        try {
            vm.loadAgent(agentJar.toString(), options);
        } catch (AgentLoadException | AgentInitializationException e) {
            throw new CliException(CliException.FAILED, "JVM " + pid + " could not load " + agentJar + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new CliException(CliException.FAILED, "loading the agent into JVM " + pid + " failed: " + e, e);
        }
    }

    /** The outer agent jar this tool runs from: {@code -Dsora.agent.jar}, else the launcher's jar. */
    static Path agentJar() throws CliException {
        String prop = System.getProperty("sora.agent.jar");
        Path jar = null;
        if (prop != null && !prop.isBlank()) {
            jar = Path.of(prop);
        } else {
            try {
                Class<?> launcher = ClassLoader.getSystemClassLoader().loadClass("io.sora.agent.launcher.SoraLauncher");
                jar = Path.of(launcher.getProtectionDomain().getCodeSource().getLocation().toURI());
            } catch (ReflectiveOperationException | java.net.URISyntaxException | RuntimeException e) {
                // not started as java -jar sora-agent.jar
            }
        }
        if (jar == null || !Files.isRegularFile(jar)) {
            throw CliException.failed("cannot find sora-agent.jar (run this tool as java -jar sora-agent.jar, or set -Dsora.agent.jar)");
        }
        return jar.toAbsolutePath();
    }

    @Override
    public void close() {
        if (connector != null) {
            try {
                connector.close();
            } catch (IOException e) {
                // the target is gone; nothing to release
            }
        }
        try {
            vm.detach();
        } catch (IOException e) {
            // as above
        }
    }
}
