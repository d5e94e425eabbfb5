package io.sora.agent.cli;

import io.sora.agent.status.ConnectionInfo;
import io.sora.agent.status.FastPathInfo;
import io.sora.agent.status.StatusTable;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import javax.management.openmbean.CompositeData;

/** {@code status <pid>}: the connections sora decided in a JVM, and its fast paths. */
final class StatusCommand implements Command {
    @Override
    public String name() {
        return "status";
    }

    @Override
    public String synopsis() {
        return "status <pid>";
    }

    @Override
    public String summary() {
        return "connections, paths and byte counts of a JVM";
    }

    @Override
    public String help() {
        return """
                usage: java -jar sora-agent.jar status <pid>

                Prints, for JVM <pid>, which fast paths sora can use there (and why not), then one row per
                connection a rule matched: id (as in the trace), side, local and remote address, path
                (shm, rdma or tcp), bytes sent and received on the fast path ('-' on TCP: sora does not
                touch TCP bytes), age, state, and the reason for the path. Closed connections stay
                listed for 30 s. Connections no rule matched are not tracked. Lines 'not served: ...'
                name APIs the JVM uses that sora cannot serve (Netty's native transports, asynchronous
                socket channels), with the fix.

                The same data is the JMX MBean io.sora:type=Connections (attributes Connections,
                FastPaths, Problems, UnservedApis, ...), for JConsole or any JMX collector. With -javaagent the bean
                is registered when the JVM's platform MBean server is first created (by this command,
                by JConsole, or by the application); -Dsora.jmx.delay=MILLIS registers it that long
                after start-up instead.
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws CliException {
        try (TargetJvm target = TargetJvm.attachToSora(args)) {
            List<ConnectionInfo> rows = target.connections();
            List<FastPathInfo> paths = new ArrayList<>();
            for (CompositeData d : (CompositeData[]) target.sora("FastPaths")) {
                paths.add(FastPathInfo.from(d));
            }
            long started = (Long) target.sora("StartTimeMillis");
            boolean hot = (Boolean) target.sora("HotAttached");
            String options = (String) target.sora("AgentOptions");
            out.println("JVM " + target.pid() + " (Java " + target.systemProperties().getProperty("java.version", "?") + "), sora "
                    + target.sora("Version") + (hot ? " attached " : " started with -javaagent ")
                    + StatusTable.age(Math.max(0, System.currentTimeMillis() - started)) + " ago"
                    + (options.isEmpty() ? "" : ", options " + options));
            out.println();
            out.println("fast paths:");
            out.print(StatusTable.fastPaths(paths).indent(2));
            for (String p : (String[]) target.sora("Problems")) {
                out.println("problem: " + p);
            }
            for (String u : unserved(target)) {
                out.println("not served: " + u);
            }
            out.println();
            out.print(StatusTable.connections(rows));
            return 0;
        }
    }

    /** The bean's {@code UnservedApis}; none from an agent older than that attribute (its bean lacks it). */
    private static String[] unserved(TargetJvm target) {
        try {
            Object v = target.sora("UnservedApis");
            return v instanceof String[] a ? a : new String[0];
        } catch (CliException e) {
            return new String[0];
        }
    }
}
