package io.sora.agent.cli;

import io.sora.trace.Hook;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a JSON-lines trace and says, per connection, which path carried its bytes and why: a
 * {@code NET.462 path} event starts a connection (its id, path, reason), a {@code NET.463 conn_close}
 * of the same id adds the byte counts. A last line cut short (a JVM killed while writing) is dropped
 * with a warning; any other malformed line is an error. Stateless.
 */
final class TraceVerifier {
    private static final Pattern SENT = Pattern.compile("\\bsent=(\\d+)");
    private static final Pattern RECEIVED = Pattern.compile("\\breceived=(\\d+)");

    private TraceVerifier() {
    }

    /** One connection of the trace; {@code sent}/{@code received} are -1 until its close was traced. */
    record Connection(long id, String path, String reason, String detail, long sent, long received) {
        Connection closed(long s, long r) {
            return new Connection(id, path, reason, detail, s, r);
        }

        /** How the connection is named in messages: its id and, when the trace has them, its addresses. */
        String name() {
            return "conn " + id + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    /** What a trace file says. */
    /**
     * @param unserved what each {@code NET.471 unserved} event says: an API the application uses that sora
     *                 cannot serve, whose connections stay on TCP without a {@code path} event of their own
     */
    record Report(Path file, List<Connection> connections, List<String> warnings, List<String> unserved) {}

    /**
     * Reads {@code file}.
     *
     * @throws CliException (usage) when it cannot be read or is not a sora JSON-lines trace
     */
    static Report read(Path file) throws CliException {
        if (!Files.isRegularFile(file)) {
            throw CliException.usage("trace file " + file + " does not exist");
        }
        List<Connection> connections = new ArrayList<>();
        Map<Long, Integer> latest = new HashMap<>();
        List<String> warnings = new ArrayList<>();
        List<String> unserved = new ArrayList<>();
        try {
            TraceReader.forEach(file, e -> {
                if (e.knownHook().orElse(null) == Hook.UNSERVED) {
                    unserved.add(e.reason() == null ? String.valueOf(e.detail()) : e.reason());
                } else {
                    add(e, connections, latest);
                }
            });
        } catch (TraceReader.MalformedTraceException e) {
            int last = lastNonBlankLine(file);
            if (e.line() != last || e.line() <= 1) {
                String hint = e.line() == 1 ? " (verify reads JSON-lines traces: a trace.file not ending in .txt;"
                        + " text traces cannot be read back)" : "";
                throw new CliException(CliException.USAGE, e.getMessage() + hint, e);
            }
            warnings.add(file + ":" + e.line() + ": last line is incomplete (was the JVM killed while writing?); ignored");
        } catch (IOException e) {
            throw new CliException(CliException.USAGE, "cannot read trace " + file + ": " + e.getMessage(), e);
        }
        return new Report(file, connections, warnings, unserved);
    }

    private static void add(TraceEvent e, List<Connection> connections, Map<Long, Integer> latest) {
        Hook hook = e.knownHook().orElse(null);
        if (hook == Hook.PATH) {
            latest.put(e.conn(), connections.size());
            connections.add(new Connection(e.conn(), e.path() == null ? "?" : e.path(), e.reason(), e.detail(), -1, -1));
        } else if (hook == Hook.CONN_CLOSE && latest.containsKey(e.conn())) {
            int i = latest.get(e.conn());
            String d = e.detail() == null ? "" : e.detail();
            connections.set(i, connections.get(i).closed(number(SENT, d), number(RECEIVED, d)));
        }
    }

    private static long number(Pattern p, String text) {
        Matcher m = p.matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static int lastNonBlankLine(Path file) throws CliException {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            for (int i = lines.size(); i > 0; i--) {
                if (!lines.get(i - 1).isBlank()) {
                    return i;
                }
            }
            return 0;
        } catch (IOException e) {
            throw new CliException(CliException.USAGE, "cannot read trace " + file + ": " + e.getMessage(), e);
        }
    }

    /** The connections that did not take {@code expected}. */
    static List<Connection> unexpected(List<Connection> connections, String expected) {
        List<Connection> out = new ArrayList<>();
        for (Connection c : connections) {
            if (!c.path().equals(expected)) {
                out.add(c);
            }
        }
        return out;
    }
}
