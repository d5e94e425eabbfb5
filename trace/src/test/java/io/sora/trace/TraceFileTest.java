package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Real files through {@link Traces#create(TraceConfig)} and back through {@link TraceReader}. */
class TraceFileTest {
    @TempDir
    Path dir;

    @Test
    void jsonFileRoundTripsThroughTheReader() throws IOException {
        Path file = dir.resolve("sub/client.trace");
        Instant before = Instant.now();
        Tracer t = Traces.create(TraceConfig.parse("iprint=all", file.toString()));
        t.entry(Hook.RDMA_INIT_ENTRY, 0, null);
        t.exit(Hook.RDMA_INIT_EXIT, 0, -19, "ENODEV");
        t.event(Hook.PATH, 5, "tcp", "rdma unavailable: no device", null);
        t.entry(Hook.SOCKET_CONNECT_ENTRY, 5, "\"quoted\"\ttab");
        t.close();

        TraceReader.Trace trace = TraceReader.read(file);
        assertEquals(1, trace.header().version());
        assertEquals(ProcessHandle.current().pid(), trace.header().pid());
        assertTrue(!trace.header().start().isBefore(before.minusSeconds(1)), trace.header().toString());
        List<TraceEvent> ev = trace.events();
        assertEquals(4, ev.size());
        Thread me = Thread.currentThread();
        TraceEvent exit = ev.get(1);
        assertEquals(me.getName(), exit.thread());
        assertEquals(LogbackTracer.threadId(me), exit.tid());
        assertEquals(Category.JSOR, exit.cat());
        assertEquals(3, exit.id());
        assertEquals("RDMA_Init", exit.hook());
        assertEquals("<", exit.dir());
        assertEquals(-19, exit.rc());
        assertEquals(0, exit.conn());
        assertEquals("ENODEV", exit.detail());
        assertEquals(Optional.of(Hook.RDMA_INIT_EXIT), exit.knownHook());
        TraceEvent path = ev.get(2);
        assertEquals(new TraceEvent(path.ts(), me.getName(), exit.tid(), Category.NET, 462, "path", "-", null, 5,
                "tcp", "rdma unavailable: no device", null), path);
        assertNull(ev.get(0).rc());
        assertEquals("\"quoted\"\ttab", ev.get(3).detail());
        assertTrue(!ev.get(0).ts().isAfter(ev.get(3).ts()));
    }

    @Test
    void txtFileGetsTheTextFormWithoutHeader() throws IOException {
        Path file = dir.resolve("server.txt");
        Tracer t = Traces.create(TraceConfig.parse("iprint=JSOR", file.toString()));
        t.entry(Hook.INITVERBS_ENTRY, 0, null);
        t.close();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals(1, lines.size());
        assertTrue(lines.get(0).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} 0x[0-9a-f]{8,}  JSOR\\.39   >initverbs\\(\\)"),
                lines.get(0));
    }

    @Test
    void anExistingFileIsReplacedNotAppendedTo() throws IOException {
        Path file = dir.resolve("again.trace");
        Files.writeString(file, "old content\n");
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", file.toString()));
        t.close();
        List<String> lines = Files.readAllLines(file);
        assertEquals(1, lines.size());
        assertTrue(lines.get(0).startsWith("{\"schema\":\"sora-trace\""), lines.get(0));
    }

    /**
     * A trace names connections, segment paths and RDMA keys: its file is its owner's alone, and a symbolic
     * link planted at its name is not followed (the trace is refused, the agent runs without it). Before, the
     * file got the umask's mode (0644) and the link was followed (found in review, 2026-11-29).
     */
    @Test
    void theFileIsItsOwnersAloneAndALinkAtItsNameIsRefused() throws IOException {
        Path file = dir.resolve("private.trace");
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", file.toString()));
        t.close();
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        Path target = Files.writeString(dir.resolve("someone-elses"), "keep\n");
        Path link = Files.createSymbolicLink(dir.resolve("linked.trace"), target);
        java.io.UncheckedIOException e = org.junit.jupiter.api.Assertions.assertThrows(java.io.UncheckedIOException.class,
                () -> Traces.create(TraceConfig.parse("iprint=NET", link.toString())));
        assertTrue(e.getMessage().contains("cannot open trace file '" + link + "'"), e.getMessage());
        assertEquals("keep\n", Files.readString(target), "the link's target is untouched");
    }

    @Test
    void missingDirectoriesOfTheFileAreCreated() throws IOException {
        Path file = dir.resolve("not").resolve("yet").resolve("client.trace");
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", file.toString()));
        t.event(Hook.PATH, 7, "shm", "paired", null);
        t.close();
        List<String> lines = Files.readAllLines(file);
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).contains("\"conn\":7"), lines.get(1));
    }

    @Test
    void anUnwritableFileIsReportedByName() {
        Path file = dir.resolve("is-a-directory");
        assertTrue(file.toFile().mkdir());
        UncheckedIOException e = assertThrows(UncheckedIOException.class,
                () -> Traces.create(TraceConfig.parse("iprint=NET", file.toString())));
        assertTrue(e.getMessage().contains("cannot open trace file '" + file + "'"), e.getMessage());
    }

    @Test
    void aFileWhereItsDirectoryShouldBeIsNamed() throws IOException {
        Path notADirectory = Files.writeString(dir.resolve("plain"), "x");
        Path file = notADirectory.resolve("t.json");
        UncheckedIOException e = assertThrows(UncheckedIOException.class,
                () -> Traces.create(TraceConfig.parse("iprint=NET", file.toString())));
        assertEquals("java.io.IOException: cannot open trace file '" + file + "': " + notADirectory
                + " exists and is not a directory", e.getMessage());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void concurrentWritersProduceWholeLinesInPerThreadOrder() throws Exception {
        Path file = dir.resolve("threads.trace");
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", file.toString()));
        int threads = 4;
        int perThread = 500;
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread w = new Thread(() -> {
                for (int n = 0; n < perThread; n++) {
                    t.event(Hook.PATH, n + 1, "shm", "seq", Integer.toString(n));
                }
            }, "writer-" + i);
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        t.close();
        Map<String, Integer> next = new HashMap<>();
        for (TraceEvent e : TraceReader.read(file).events()) {
            int expected = next.getOrDefault(e.thread(), 0);
            assertEquals(Integer.toString(expected), e.detail(), e.thread());
            assertEquals(expected + 1, e.conn());
            next.put(e.thread(), expected + 1);
        }
        assertEquals(threads, next.size());
        for (int count : next.values()) {
            assertEquals(perThread, count);
        }
    }
}
