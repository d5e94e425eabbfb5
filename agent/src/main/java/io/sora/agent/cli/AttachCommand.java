package io.sora.agent.cli;

import io.sora.agent.AgentOptions;
import io.sora.agent.status.FastPathInfo;
import io.sora.agent.status.StatusTable;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.management.openmbean.CompositeData;

/** {@code attach <pid> [options]}: loads sora into a running JVM. */
final class AttachCommand implements Command {
    @Override
    public String name() {
        return "attach";
    }

    @Override
    public String synopsis() {
        return "attach <pid> [options]";
    }

    @Override
    public String summary() {
        return "load sora into a running JVM (17+)";
    }

    @Override
    public String help() {
        return """
                usage: java -jar sora-agent.jar attach <pid> [options]

                Loads the sora agent into the running JVM <pid> (Java 17 or later, same user), which
                needs no agent-related flag. Connections made after the attach follow the rules;
                connections that exist already stay on TCP, untouched.

                options: the agent options of -javaagent:sora-agent.jar=OPTIONS, comma separated:
                  conf=FILE          the rule file (relative paths are resolved here, not in the target)
                  trace=SPEC         trace selection, '+' for the commas of the spec: trace=iprint=NET+iprint=JSOR
                  trace.file=PATH    where the trace goes (JSON lines; .txt for the text form); %p is the pid
                Without conf=, the target's -Dsora.conf / -Dcom.ibm.net.rdma.conf / -Dcom.ibm.nio.rdma.conf apply.

                Prints the fast paths available in the target and any configuration problem (exit 1).
                On JDK 21+ the target prints a warning about a dynamically loaded agent unless it was
                started with -XX:+EnableDynamicAgentLoading; see docs/operations.md.

                example: java -jar sora-agent.jar attach 4711 conf=/etc/sora/server.conf
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws CliException {
        if (args.isEmpty()) {
            throw CliException.usage("missing <pid>");
        }
        if (args.size() > 2) {
            throw CliException.usage("too many arguments " + args.subList(1, args.size())
                    + ": separate agent options with commas, e.g. conf=sora.conf,trace=iprint=NET");
        }
        long pid = TargetJvm.parsePid(args.get(0));
        String options = args.size() == 2 ? resolveOptions(args.get(1), Path.of("")) : "";
        Path jar = TargetJvm.agentJar();
        try (TargetJvm target = TargetJvm.attach(pid)) {
            int feature = target.javaFeature();
            String version = target.systemProperties().getProperty("java.version", "?");
            if (feature < 17) {
                throw CliException.failed("JVM " + pid + " runs Java " + version + "; sora needs Java 17 or later");
            }
            if (target.soraAttached()) {
                throw CliException.failed("sora is already attached to " + pid
                        + " (java -jar sora-agent.jar detach " + pid + " first to attach with other options)");
            }
            String dynamic = feature >= 21 ? target.vmOption("EnableDynamicAgentLoading") : null;
            if (dynamic != null && dynamic.startsWith("false/")) {
                throw CliException.failed("JVM " + pid + " was started with -XX:-EnableDynamicAgentLoading, so it refuses"
                        + " agents loaded at run time; restart it without that flag, or with -javaagent:sora-agent.jar");
            }
            // the jar's path first: the target may hold this class from an earlier attach's jar (SoraLauncher.JAR_OPTION)
            target.loadAgent(jar, io.sora.agent.launcher.SoraLauncher.JAR_OPTION + jar.toAbsolutePath() + "\n" + options);
            if (!target.soraAttached()) {
                throw CliException.failed("sora did not start in JVM " + pid + "; that JVM's stderr says why");
            }
            out.println("sora attached to " + pid + " (Java " + version + ")" + (options.isEmpty() ? "" : ", options " + options));
            List<FastPathInfo> paths = new ArrayList<>();
            for (CompositeData d : (CompositeData[]) target.sora("FastPaths")) {
                paths.add(FastPathInfo.from(d));
            }
            out.print(StatusTable.fastPaths(paths));
            if (dynamic != null && !dynamic.equals("true/VM_CREATION")) {
                out.println("note: JVM " + pid + " printed \"WARNING: A Java agent has been loaded dynamically\" on its"
                        + " stderr (Java 21+ does for every agent loaded at run time unless started with"
                        + " -XX:+EnableDynamicAgentLoading); it needs no action, see docs/operations.md");
            }
            String[] problems = (String[]) target.sora("Problems");
            for (String p : problems) {
                err.println("sora attach: problem in " + pid + ": " + p);
            }
            return problems.length == 0 ? 0 : CliException.FAILED;
        }
    }

    /**
     * Checks the options as the agent will, and makes {@code conf} and {@code trace.file} absolute against
     * {@code cwd}: the target JVM would resolve them against its own working directory.
     */
    static String resolveOptions(String options, Path cwd) throws CliException {
        Map<String, String> parsed;
        try {
            parsed = AgentOptions.parse(options).asMap();
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : parsed.entrySet()) {
            String value = e.getValue();
            if (e.getKey().equals("trace")) {
                try {
                    io.sora.trace.TraceConfig.parse(value, null); // a mistake is named here, before anything is sent
                } catch (IllegalArgumentException bad) {
                    throw CliException.usage(bad.getMessage());
                }
            }
            if (e.getKey().equals("conf") || e.getKey().equals("trace.file")) {
                Path p = cwd.resolve(value).toAbsolutePath().normalize();
                if (e.getKey().equals("conf") && !Files.isRegularFile(p)) {
                    throw CliException.usage("conf file " + p + " does not exist");
                }
                value = p.toString();
            }
            out.add(e.getKey() + "=" + value);
        }
        return String.join(",", out);
    }
}
