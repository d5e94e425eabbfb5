package io.sora.agent.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code verify <trace>... [--expect rdma|shm|tcp]}: which path each traced connection took, and why. */
final class VerifyCommand implements Command {
    private static final Set<String> PATHS = Set.of("rdma", "shm", "tcp");

    @Override
    public String name() {
        return "verify";
    }

    @Override
    public String synopsis() {
        return "verify <trace>... [--expect rdma|shm|tcp]";
    }

    @Override
    public String summary() {
        return "which path each connection of a trace took";
    }

    @Override
    public String help() {
        return """
                usage: java -jar sora-agent.jar verify <trace file>... [--expect rdma|shm|tcp]

                Reads JSON-lines traces (written with trace=iprint=NET and a trace.file not ending in
                .txt) and prints, per connection, the path that carried its bytes, the bytes sent and
                received on it (once the connection closed), and why that path was taken.

                --expect PATH   exit 1 when any connection took another path (each is named), when
                                the trace holds no connection at all, or (rdma, shm) when it records an
                                API sora does not serve (NET.471: its connections are on TCP, unlisted)

                A last line cut short (the JVM was killed while writing) is ignored with a warning.
                exit codes: 0 as expected, 1 a connection took another path, 2 unreadable trace
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws CliException {
        List<Path> files = new ArrayList<>();
        String expected = null;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--expect") || a.startsWith("--expect=")) {
                String v = a.contains("=") ? a.substring(a.indexOf('=') + 1) : (i + 1 < args.size() ? args.get(++i) : null);
                if (v == null || !PATHS.contains(v)) {
                    throw CliException.usage("--expect needs rdma, shm or tcp, found " + (v == null ? "nothing" : "'" + v + "'"));
                }
                expected = v;
            } else if (a.startsWith("-")) {
                throw CliException.usage("unknown option '" + a + "'");
            } else {
                files.add(Path.of(a));
            }
        }
        if (files.isEmpty()) {
            throw CliException.usage("missing <trace file>");
        }
        int failures = 0;
        int unservedApis = 0;
        int total = 0;
        for (Path f : files) {
            TraceVerifier.Report r = TraceVerifier.read(f);
            r.warnings().forEach(w -> err.println("warning: " + w));
            out.println(f + ": " + r.connections().size() + (r.connections().size() == 1 ? " connection" : " connections"));
            for (TraceVerifier.Connection c : r.connections()) {
                out.println(line(c));
            }
            for (String u : r.unserved()) {
                out.println("  not served: " + u);
            }
            total += r.connections().size();
            if (expected != null && !expected.equals("tcp")) {
                // an API sora cannot serve (Netty's native transport, AsynchronousSocketChannel): its connections
                // are on TCP and have no path event, so "all took PATH" would not be the whole truth
                for (String u : r.unserved()) {
                    unservedApis++;
                    err.println("FAIL " + f + ": the application uses an API sora does not serve, its connections on tcp"
                            + " and not listed: " + u);
                }
            }
            if (expected != null) {
                for (TraceVerifier.Connection c : TraceVerifier.unexpected(r.connections(), expected)) {
                    failures++;
                    err.println("FAIL " + f + ": " + c.name() + " took " + c.path() + ", expected " + expected
                            + (c.reason() == null ? "" : ": " + c.reason()));
                }
            }
        }
        if (expected == null) {
            return 0;
        }
        if (total == 0 && unservedApis == 0) {
            err.println("FAIL no connection in the trace: was it written with trace=iprint=NET, and did a connection happen?");
            return CliException.FAILED;
        }
        if (failures > 0 || unservedApis > 0) {
            err.println("FAILED: " + failures + " of " + total + " connections did not take " + expected
                    + (unservedApis == 0 ? "" : ", and the application uses " + unservedApis
                    + (unservedApis == 1 ? " API" : " APIs") + " sora does not serve"));
            return CliException.FAILED;
        }
        out.println("OK: all " + total + (total == 1 ? " connection" : " connections") + " took " + expected);
        return 0;
    }

    private static String line(TraceVerifier.Connection c) {
        String bytes = c.sent() >= 0 ? "sent=" + c.sent() + " received=" + c.received()
                : c.path().equals("tcp") ? "(TCP bytes are not counted)" : "(not closed in the trace)";
        return String.format("  conn %-4d %-4s %-32s %s%s", c.id(), c.path(), bytes, c.reason() == null ? "" : c.reason(),
                c.detail() == null ? "" : "  [" + c.detail() + "]");
    }
}
