package io.sora.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads a JSON-lines trace (as written by {@link Traces} to a file not ending in {@code .txt}) back into
 * {@link TraceEvent}s. The first non-blank line must be the header with schema {@code sora-trace} and a
 * version this reader supports ({@value #SUPPORTED_VERSION}); blank lines are skipped; members a newer
 * writer adds are ignored. Any other deviation is a {@link MalformedTraceException} naming file and line.
 *
 * <pre>{@code
 * TraceReader.Trace trace = TraceReader.read(Path.of("client.trace"));
 * for (TraceEvent e : trace.events()) {
 *     if (e.knownHook().orElse(null) == Hook.PATH) { System.out.println(e.conn() + " " + e.path()); }
 * }
 * }</pre>
 * Stateless and thread-safe.
 */
public final class TraceReader {
    /** The schema version this reader understands. */
    public static final int SUPPORTED_VERSION = JsonLines.VERSION;

    private TraceReader() {
    }

    /** The header line: who wrote the trace and when. */
    public record Header(int version, long pid, Instant start, String jvm) {
    }

    /** A whole trace file. */
    public record Trace(Path file, Header header, List<TraceEvent> events) {
        public Trace {
            events = List.copyOf(events);
        }
    }

    /** A trace line that is not what the schema promises. */
    public static final class MalformedTraceException extends IOException {
        private static final long serialVersionUID = 1L;
        private final Path file;
        private final int line;

        MalformedTraceException(Path file, int line, String message, Throwable cause) {
            super(file + ":" + line + ": " + message, cause);
            this.file = file;
            this.line = line;
        }

        /** The file read. */
        public Path file() {
            return file;
        }

        /** The 1-based line number of the offending line. */
        public int line() {
            return line;
        }
    }

    /**
     * Reads the whole file into memory.
     *
     * @throws MalformedTraceException for a missing or wrong header or a malformed event line
     * @throws IOException when the file cannot be read
     */
    public static Trace read(Path file) throws IOException {
        List<TraceEvent> events = new ArrayList<>();
        Header header = forEach(file, events::add);
        return new Trace(file, header, events);
    }

    /**
     * Streams the events of {@code file} to {@code sink} in file order, after checking the header, so a
     * large trace need not be held in memory. Returns the header.
     *
     * @throws MalformedTraceException for a missing or wrong header or a malformed event line
     * @throws IOException when the file cannot be read
     */
    public static Header forEach(Path file, Consumer<TraceEvent> sink) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            Header header = null;
            int lineNo = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    Map<String, Object> members = FlatJson.parseObject(line);
                    if (header == null) {
                        header = header(members);
                    } else {
                        sink.accept(event(members));
                    }
                } catch (IllegalArgumentException e) {
                    String what = header == null ? "bad sora-trace header: " : "malformed event: ";
                    throw new MalformedTraceException(file, lineNo, what + e.getMessage(), e);
                }
            }
            if (header == null) {
                throw new MalformedTraceException(file, Math.max(lineNo, 1),
                        "empty file, expected a sora-trace header line", null);
            }
            return header;
        }
    }

    private static Header header(Map<String, Object> m) {
        Object schema = m.get("schema");
        if (!JsonLines.SCHEMA.equals(schema)) {
            throw new IllegalArgumentException("schema is " + quote(schema) + ", expected \"" + JsonLines.SCHEMA
                    + "\" (is this a sora JSON-lines trace? text traces cannot be read back)");
        }
        long version = longField(m, "version", true);
        if (version != SUPPORTED_VERSION) {
            throw new IllegalArgumentException("version " + version + " is not supported by this reader (supports "
                    + SUPPORTED_VERSION + ")");
        }
        return new Header((int) version, longField(m, "pid", true), instantField(m, "start"),
                stringField(m, "jvm", false));
    }

    private static TraceEvent event(Map<String, Object> m) {
        String catLabel = stringField(m, "cat", true);
        Category cat = null;
        for (Category c : Category.values()) {
            if (c.label().equals(catLabel)) {
                cat = c;
            }
        }
        if (cat == null) {
            throw new IllegalArgumentException("field \"cat\": unknown category \"" + catLabel + "\"");
        }
        String dir = stringField(m, "dir", true);
        if (!dir.equals(">") && !dir.equals("<") && !dir.equals("-")) {
            throw new IllegalArgumentException("field \"dir\": expected \">\", \"<\" or \"-\", found \"" + dir + "\"");
        }
        Integer rc = m.get("rc") == null ? null : intField(m, "rc");
        return new TraceEvent(instantField(m, "ts"), stringField(m, "thread", true), longField(m, "tid", true),
                cat, intField(m, "id"), stringField(m, "hook", true), dir, rc, longField(m, "conn", false),
                stringField(m, "path", false), stringField(m, "reason", false), stringField(m, "detail", false));
    }

    private static String stringField(Map<String, Object> m, String name, boolean required) {
        Object v = m.get(name);
        if (v == null) {
            if (required) {
                throw new IllegalArgumentException("missing field \"" + name + "\"");
            }
            return null;
        }
        if (!(v instanceof String)) {
            throw new IllegalArgumentException("field \"" + name + "\": expected a string, found " + v);
        }
        return (String) v;
    }

    /** An absent optional long reads as 0 (the writer omits {@code conn} when it is 0). */
    private static long longField(Map<String, Object> m, String name, boolean required) {
        Object v = m.get(name);
        if (v == null) {
            if (required) {
                throw new IllegalArgumentException("missing field \"" + name + "\"");
            }
            return 0;
        }
        if (!(v instanceof Long)) {
            throw new IllegalArgumentException("field \"" + name + "\": expected an integer, found " + quote(v));
        }
        return (Long) v;
    }

    private static int intField(Map<String, Object> m, String name) {
        long v = longField(m, name, true);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("field \"" + name + "\": " + v + " is out of the int range");
        }
        return (int) v;
    }

    private static Instant instantField(Map<String, Object> m, String name) {
        String s = stringField(m, name, true);
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("field \"" + name + "\": not an ISO-8601 UTC instant: \"" + s + "\"", e);
        }
    }

    private static String quote(Object v) {
        return v instanceof String ? "\"" + v + "\"" : String.valueOf(v);
    }
}
