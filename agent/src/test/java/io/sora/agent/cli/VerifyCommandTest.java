package io.sora.agent.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Hook;
import io.sora.trace.TraceConfig;
import io.sora.trace.Tracer;
import io.sora.trace.Traces;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Traces written by sora's own writer (and one damaged by hand), read back by {@code verify}. */
class VerifyCommandTest {
    @TempDir
    Path dir;

    private Path trace(String name, boolean secondFellBack) {
        Path file = dir.resolve(name);
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET,iprint=JSOR", file.toString()));
        t.event(Hook.PATH, 1, "shm", "paired (client.conf:1)", "local=/127.0.0.1:40001 remote=/127.0.0.1:65444");
        t.event(Hook.PATH, 2, secondFellBack ? "tcp" : "shm",
                secondFellBack ? "no sora listener at /dev/shm/sora-u/port-65444.sock" : "paired (client.conf:1)",
                "local=/127.0.0.1:40002 remote=/127.0.0.1:65444");
        t.event(Hook.CONN_CLOSE, 1, "shm", null, "sent=4096000 received=4096000");
        t.close();
        return file;
    }

    @Test
    void passesWhenEveryConnectionTookTheExpectedPath() {
        Path f = trace("good.trace", false);
        CliTest.Run r = CliTest.cli("verify", f.toString(), "--expect", "shm");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains(f + ": 2 connections"), r.out());
        assertTrue(r.out().matches("(?s).*conn 1\\s+shm\\s+sent=4096000 received=4096000\\s+paired \\(client.conf:1\\).*"), r.out());
        assertTrue(r.out().contains("OK: all 2 connections took shm"), r.out());
        assertEquals("", r.err());
    }

    /**
     * An API sora cannot serve (NET.471: Netty's native transport) puts its connections on TCP without a path
     * event: with --expect shm the trace is not all shm, whatever its listed connections say; with
     * --expect tcp it is fine. Before, "OK: all 1 connection took shm" (found in review, 2026-11-29).
     */
    @Test
    void anApiSoraDoesNotServeIsNotAllShm() {
        Path file = dir.resolve("netty.trace");
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", file.toString()));
        t.event(Hook.UNSERVED, 0, "tcp", "Netty's native epoll transport: use -Dio.netty.transport.noNative=true",
                "io.netty.channel.epoll.Epoll");
        t.event(Hook.PATH, 1, "shm", "paired (client.conf:1)", "local=/127.0.0.1:40001 remote=/127.0.0.1:65444");
        t.close();
        CliTest.Run r = CliTest.cli("verify", file.toString(), "--expect", "shm");
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.out().contains("not served: Netty's native epoll transport"), r.out());
        assertTrue(r.err().contains("FAIL " + file + ": the application uses an API sora does not serve"), r.err());
        assertTrue(r.err().contains("FAILED: 0 of 1 connections did not take shm, and the application uses 1 API sora does not serve"), r.err());
        assertFalse(r.out().contains("OK:"), r.out());
        assertEquals(1, CliTest.cli("verify", file.toString(), "--expect", "tcp").exit(), "the listed one is on shm");
    }

    @Test
    void failsNamingTheConnectionThatFellBack() {
        Path f = trace("bad.trace", true);
        CliTest.Run r = CliTest.cli("verify", f.toString(), "--expect", "shm");
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.err().contains("FAIL " + f + ": conn 2 (local=/127.0.0.1:40002 remote=/127.0.0.1:65444) took tcp,"
                + " expected shm: no sora listener at /dev/shm/sora-u/port-65444.sock"), r.err());
        assertFalse(r.err().contains("conn 1 "), r.err());
        assertTrue(r.err().contains("FAILED: 1 of 2 connections did not take shm"), r.err());
        assertEquals(0, CliTest.cli("verify", f.toString()).exit(), "without --expect it only reports");
        CliTest.Run tcp = CliTest.cli("verify", f.toString(), "--expect=tcp");
        assertEquals(1, tcp.exit());
        assertTrue(tcp.err().contains("conn 1 (local=/127.0.0.1:40001 remote=/127.0.0.1:65444) took shm, expected tcp"), tcp.err());
    }

    @Test
    void aHalfWrittenLastLineIsIgnoredWithAWarning() throws Exception {
        Path f = trace("killed.trace", false);
        Files.writeString(f, "{\"ts\":\"2026-11-22T04:26:27.5", StandardOpenOption.APPEND);
        CliTest.Run r = CliTest.cli("verify", f.toString(), "--expect", "shm");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().startsWith("warning: " + f + ":5: last line is incomplete"), r.err());
        assertTrue(r.out().contains("2 connections"), r.out());
    }

    @Test
    void aMalformedLineElsewhereIsAnError() throws Exception {
        Path f = trace("broken.trace", false);
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(f));
        lines.add(2, "{\"ts\":");
        Files.write(f, lines);
        CliTest.Run r = CliTest.cli("verify", f.toString(), "--expect", "shm");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains(f + ":3: malformed event"), r.err());
    }

    @Test
    void aTraceWithoutConnectionsCannotPassAnExpectation() {
        Path file = dir.resolve("empty.trace");
        Tracer t = Traces.create(TraceConfig.parse("iprint=JSOR", file.toString()));
        t.entry(Hook.RDMA_INIT_ENTRY, 0, null);
        t.close();
        CliTest.Run r = CliTest.cli("verify", file.toString(), "--expect", "rdma");
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("no connection in the trace"), r.err());
    }

    @Test
    void aTextTraceOrAMissingFileIsAUsageError() throws Exception {
        Path text = dir.resolve("t.txt");
        Files.writeString(text, "04:26:27.502 0x00000001  JSOR.0    >RDMA_Init()\n");
        CliTest.Run r = CliTest.cli("verify", text.toString());
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("text traces cannot be read back"), r.err());
        CliTest.Run missing = CliTest.cli("verify", dir.resolve("nope.trace").toString());
        assertEquals(2, missing.exit());
        assertTrue(missing.err().contains("does not exist"), missing.err());
    }
}
