package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two JVMs on shm whose ends each write more than a ring holds before reading: a client that sends a whole
 * 2 MiB message before it reads, against an echo server answering each piece as it reads it. Loopback TCP
 * buffers that much; the rings (64 KiB each way by default) do not, and until 2026-11-29 both ends waited
 * for each other for ever (docs/reliability.md, bug 75). Now the waiting writers move their bytes to the TCP
 * connection: every byte arrives, each connection stays usable, both ends were paired on shm, and the
 * trace says which direction moved (JSOR.67, {@code shm_tcp_switch}).
 */
class FullRingsBothWaysIT {
    static final int BYTES = 2 << 20; // well under what loopback TCP buffers (8 MiB hangs over plain TCP here too)
    static final int CONNECTIONS = 3;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void everyByteArrivesWhereBothEndsWriteMoreThanARingBeforeReading(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path server = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=5s");
        Path client = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=5s");
        Path serverTrace = tmp.resolve("server.trace");
        Path clientTrace = tmp.resolve("client.trace");
        try (ForkedJvm s = ForkedJvm.start(jdk, Reliability.agent(server, tmp, serverTrace), Reliability.cp(),
                Reliability.APPS + "EchoServer", "" + port, "" + CONNECTIONS)) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.start(jdk, Reliability.agent(client, tmp, clientTrace), Reliability.cp(),
                    Reliability.APPS + "WriteAllThenRead", "" + port, "" + BYTES, "" + CONNECTIONS)) {
                assertEquals(0, c.await(120_000), c.describe());
                assertEquals(0, s.await(60_000), s.describe());
                assertEquals("ok=" + CONNECTIONS, Reliability.require(c, "DONE"), c.describe());
                assertEquals(List.of("PATH shm"), c.stdout().stream().filter(l -> l.startsWith("PATH")).distinct().toList(),
                        c.describe());
                assertEquals("shm=" + CONNECTIONS + " tcp=0 failed=0", Reliability.require(s, "SERVED"), s.describe());
            }
        }
        long switches = Files.readAllLines(serverTrace).stream().filter(l -> l.contains("shm_tcp_switch")).count()
                + Files.readAllLines(clientTrace).stream().filter(l -> l.contains("shm_tcp_switch")).count();
        assertTrue(switches >= CONNECTIONS, "a direction of each connection moved to TCP, traced: " + switches);
    }
}
