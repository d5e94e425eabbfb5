package io.sora.rules;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Finds the configuration file. In order, the first one set wins:
 * <ol>
 *   <li>the agent argument {@code conf=FILE} ({@code -javaagent:sora-agent.jar=conf=rdma.conf});</li>
 *   <li>the system property {@code -Dsora.conf=FILE};</li>
 *   <li>JSOR's system properties: {@code -Dcom.ibm.net.rdma.conf=FILE} (JSOR's rules for {@code java.net}
 *       sockets) and {@code -Dcom.ibm.nio.rdma.conf=FILE} (its rules for NIO socket channels), so a JSOR
 *       command line works unchanged. sora serves sockets and channels from one set of rules: with either
 *       property alone its file is that set; with both, naming two files, the rules of both, the sockets'
 *       file first ({@link #locateAll}).</li>
 * </ol>
 * A relative path is left relative (to the JVM's working directory). Existence is not checked here: reading
 * the file with {@link RuleSet#parse(Path)} reports a missing file. Stateless; thread-safe.
 */
public final class ConfigLocator {

    /** The agent argument key. */
    public static final String AGENT_ARGUMENT = "conf";
    /** sora's system property. */
    public static final String SORA_PROPERTY = "sora.conf";
    /** JSOR's system property (its rules for {@code java.net} sockets). */
    public static final String JSOR_PROPERTY = "com.ibm.net.rdma.conf";
    /** JSOR's system property for NIO socket channels (IBM SDK 8 SR2 FP10 and later). */
    public static final String JSOR_NIO_PROPERTY = "com.ibm.nio.rdma.conf";

    private ConfigLocator() {
    }

    /**
     * Finds the configuration file: agent argument conf=FILE first, then -Dsora.conf, then JSOR's
     * -Dcom.ibm.net.rdma.conf, then JSOR's -Dcom.ibm.nio.rdma.conf (for a second file: {@link #locateAll}).
     *
     * @param agentArgs        the parsed agent arguments ({@code key=value} pairs); null means none
     * @param systemProperties the JVM's system properties (defaults included); null means none
     * @return the path as given, or empty if none of the four is set
     * @throws IllegalArgumentException if the winning setting is empty or blank, or not a valid path; the
     *                                  message names the setting
     */
    public static Optional<Path> locate(Map<String, String> agentArgs, Properties systemProperties) {
        String origin = winner(agentArgs, systemProperties);
        if (origin == null) {
            return Optional.empty();
        }
        return Optional.of(path(origin, valueOf(origin, agentArgs, systemProperties)));
    }

    private static Path path(String origin, String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(origin + " is empty: give a configuration file, as in "
                    + example(origin));
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(origin + " '" + value + "' is not a valid path: " + e.getReason(), e);
        }
    }

    /**
     * Every configuration file to read, in order: as {@link #locate}, except that where JSOR's two
     * properties decide (neither {@code conf=} nor {@code -Dsora.conf} is set) and both are set, naming
     * two different files, both are returned, {@code -Dcom.ibm.net.rdma.conf}'s first. Their rules
     * together are the rule set (for sockets and channels alike, as sora's rules always are).
     *
     * @return the paths as given; empty if none is set
     * @throws IllegalArgumentException as {@link #locate}, for any of the settings returned
     */
    public static java.util.List<Path> locateAll(Map<String, String> agentArgs, Properties systemProperties) {
        String origin = winner(agentArgs, systemProperties);
        if (origin == null) return java.util.List.of();
        Path first = path(origin, valueOf(origin, agentArgs, systemProperties));
        if (!("-D" + JSOR_PROPERTY).equals(origin) || systemProperties.getProperty(JSOR_NIO_PROPERTY) == null) {
            return java.util.List.of(first);
        }
        Path nio = path("-D" + JSOR_NIO_PROPERTY, systemProperties.getProperty(JSOR_NIO_PROPERTY));
        if (nio.normalize().equals(first.normalize())) return java.util.List.of(first);
        return java.util.List.of(first, nio);
    }

    /**
     * Which of the four named the file, for messages: {@code "agent argument conf"}, {@code "-Dsora.conf"},
     * {@code "-Dcom.ibm.net.rdma.conf"}, {@code "-Dcom.ibm.nio.rdma.conf"}; empty if none is set. Agrees
     * with {@link #locate}.
     *
     * @param agentArgs        as for {@link #locate}
     * @param systemProperties as for {@link #locate}
     * @return the name of the winning setting, or empty
     */
    public static Optional<String> origin(Map<String, String> agentArgs, Properties systemProperties) {
        return Optional.ofNullable(winner(agentArgs, systemProperties));
    }

    private static String winner(Map<String, String> agentArgs, Properties systemProperties) {
        if (agentArgs != null && agentArgs.get(AGENT_ARGUMENT) != null) {
            return "agent argument " + AGENT_ARGUMENT;
        }
        if (systemProperties != null && systemProperties.getProperty(SORA_PROPERTY) != null) {
            return "-D" + SORA_PROPERTY;
        }
        if (systemProperties != null && systemProperties.getProperty(JSOR_PROPERTY) != null) {
            return "-D" + JSOR_PROPERTY;
        }
        if (systemProperties != null && systemProperties.getProperty(JSOR_NIO_PROPERTY) != null) {
            return "-D" + JSOR_NIO_PROPERTY;
        }
        return null;
    }

    private static String valueOf(String origin, Map<String, String> agentArgs, Properties props) {
        if (origin.startsWith("agent")) {
            return agentArgs.get(AGENT_ARGUMENT);
        }
        return props.getProperty(origin.substring(2));
    }

    private static String example(String origin) {
        if (origin.startsWith("agent")) {
            return AGENT_ARGUMENT + "=rdma.conf";
        }
        return origin + "=rdma.conf";
    }
}
