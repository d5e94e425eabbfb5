package io.sora.it.rdma;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
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
 * This JVM's own sora trace (JSON lines), read as an operator would: the file named by the
 * {@code trace.file=} option of this JVM's {@code -javaagent:} argument. The agent flushes every event
 * as it is written, so reading the file while the JVM runs sees every event emitted so far. Only the
 * flat fields the RDMA tests need are extracted ({@code cat}, {@code id}, {@code conn}, {@code path},
 * {@code detail}); the classes of the trace module are not on the guest's class path.
 */
final class SelfTrace {
    /** ibv_access_flags (verbs.h). */
    static final int LOCAL_WRITE = 1;
    static final int REMOTE_WRITE = 2;
    static final int REMOTE_READ = 4;
    static final int REMOTE_ATOMIC = 8;

    private static final Pattern STR = Pattern.compile("\"(thread|cat|hook|path|reason|detail)\":\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern NUM = Pattern.compile("\"(id|conn|rc)\":(-?\\d+)");
    private static final Pattern KV = Pattern.compile("(bytes|lkey|rkey|access|rc)=(-?\\d+)");

    /** One event: the fields the tests use; {@code conn} 0 when absent. */
    record Event(String cat, int id, long conn, String path, String detail, String line) {
        boolean is(String category, int hookId) {
            return category.equals(cat) && id == hookId;
        }

        /** A {@code key=number} item of the detail (reg_mr, dereg_mr), or null. */
        Long detailNumber(String key) {
            Matcher m = KV.matcher(detail == null ? "" : detail);
            while (m.find()) {
                if (m.group(1).equals(key)) return Long.parseLong(m.group(2));
            }
            return null;
        }
    }

    /** A JSOR.70 reg_mr event: which region, its size, keys and access flags. */
    record Registration(long conn, String what, long bytes, long rkey, int access) {
        boolean remotelyAccessible() {
            return (access & (REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC)) != 0;
        }
    }

    private final Path file;

    private SelfTrace(Path file) {
        this.file = file;
    }

    /** The trace of this JVM; fails with the JVM's arguments when it has no agent or no JSON trace file. */
    static SelfTrace ofThisJvm() {
        List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (String a : args) {
            if (!a.startsWith("-javaagent:")) continue;
            for (String opt : a.substring(a.indexOf('=') + 1).split(",")) {
                if (opt.startsWith("trace.file=")) {
                    Path p = Path.of(opt.substring("trace.file=".length()));
                    if (!Files.isRegularFile(p)) throw new AssertionError("trace file " + p + " does not exist");
                    if (p.toString().endsWith(".txt")) throw new AssertionError("trace file " + p + " is text, not JSON lines");
                    return new SelfTrace(p);
                }
            }
        }
        throw new AssertionError("this JVM has no sora agent with trace.file= and iprint=JSOR+NET; arguments: " + args);
    }

    /** The agent argument of this JVM ({@code -javaagent:...}), for peers that must use the same agent and rules. */
    static String agentArgument() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("-javaagent:")).findFirst()
                .orElseThrow(() -> new AssertionError("this JVM runs without the sora agent"));
    }

    Path file() {
        return file;
    }

    /** The current end of the file: events written later are read with {@link #eventsFrom}. */
    long mark() throws IOException {
        return Files.size(file);
    }

    /** Connection ids of the {@code NET.462 path} events with path {@code rdma} among {@code events}. */
    static java.util.Set<Long> rdmaConnections(List<Event> events) {
        java.util.Set<Long> out = new java.util.LinkedHashSet<>();
        for (Event e : events) {
            if (e.is("NET", 462) && "rdma".equals(e.path())) out.add(e.conn());
        }
        return out;
    }

    /** Every complete event line from byte {@code offset} on. */
    List<Event> eventsFrom(long offset) throws IOException {
        byte[] bytes;
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long len = f.length() - offset;
            if (len < 0) throw new IOException("trace " + file + " shrank below offset " + offset);
            bytes = new byte[(int) len];
            f.seek(offset);
            f.readFully(bytes);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int end = text.lastIndexOf('\n'); // a line still being written is left for the next read
        List<Event> out = new ArrayList<>();
        if (end < 0) return out;
        for (String line : text.substring(0, end).split("\n")) {
            if (line.startsWith("{\"ts\"")) out.add(parse(line));
        }
        return out;
    }

    static Event parse(String line) {
        Map<String, String> s = new HashMap<>();
        Matcher m = STR.matcher(line);
        while (m.find()) s.put(m.group(1), m.group(2).replace("\\\"", "\"").replace("\\\\", "\\"));
        Map<String, Long> n = new HashMap<>();
        m = NUM.matcher(line);
        while (m.find()) n.putIfAbsent(m.group(1), Long.parseLong(m.group(2)));
        return new Event(s.get("cat"), n.getOrDefault("id", -1L).intValue(), n.getOrDefault("conn", 0L),
                s.get("path"), s.get("detail"), line);
    }

    /** The JSOR.70 reg_mr events among {@code events}; a malformed one fails with its line. */
    static List<Registration> registrations(List<Event> events) {
        List<Registration> out = new ArrayList<>();
        for (Event e : events) {
            if (!e.is("JSOR", 70)) continue;
            Long bytes = e.detailNumber("bytes");
            Long rkey = e.detailNumber("rkey");
            Long access = e.detailNumber("access");
            int cut = e.detail() == null ? -1 : e.detail().indexOf(" bytes=");
            if (bytes == null || rkey == null || access == null || cut < 0) {
                throw new AssertionError("reg_mr event without bytes, rkey and access: " + e.line());
            }
            out.add(new Registration(e.conn(), e.detail().substring(0, cut), bytes, rkey, access.intValue()));
        }
        return out;
    }

    /** Registrations minus successful deregistrations among {@code events} (reg_mr - dereg_mr with rc=0). */
    static long liveRegistrations(List<Event> events) {
        return liveRegistrations(events, null);
    }

    /** As {@link #liveRegistrations(List)}, counting only the events of {@code conns} (all when null). */
    static long liveRegistrations(List<Event> events, java.util.Set<Long> conns) {
        long live = 0;
        for (Event e : events) {
            if (conns != null && !conns.contains(e.conn())) continue;
            if (e.is("JSOR", 70)) live++;
            else if (e.is("JSOR", 71) && Long.valueOf(0).equals(e.detailNumber("rc"))) live--; // a failed dereg leaves it live
        }
        return live;
    }
}
