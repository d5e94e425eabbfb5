package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A connection is in the server's {@code status} as soon as the client's connect has returned, even while
 * the server's accepting thread still waits for the JVM's first-connection warm-up (PathWarmup): the
 * server records the connection first and waits after. Until 2026-11-30 it waited first, so that for up to
 * the warm-up's wait (300 ms by default) a connection both ends used was in neither the server's
 * {@code status} nor its trace (seen as a rare failure of {@link HotAttachIT}, whose re-attached server
 * warms up again as its third client connects). Here the server's warm-up is made long (millions of
 * rounds, a wait of 4 s), so the window is seconds wide; the client's is off, so its connect returns at once.
 */
class StatusListsPairedConnectionIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(180)
    void aConnectionIsListedOnceTheClientsConnectReturned(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        String cp = ForkedJvm.testClasses().toString();
        List<String> serverArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + serverConf,
                "-Dsora.warmup.rounds=20000000", "-Dsora.warmup.wait=4000");
        try (ForkedJvm server = ForkedJvm.start(jdk, serverArgs, cp, "io.sora.it.ops.EchoServerApp", "" + port, "150")) {
            server.awaitLine("READY", 60_000);
            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf,
                    "-Dsora.warmup.disabled=true");
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.ChattyClient", "" + port, "150")) {
                client.awaitLine("READY", 60_000);
                String conn = HotAttachIT.open(client, 1);
                SoraCli s = SoraCli.run(jdk, "status", Long.toString(server.process().pid()));
                assertEquals(0, s.exit, s::toString);
                assertEquals(1, s.rows().size(), "the paired connection, listed by the server:\n" + s);
                assertEquals("shm", s.row(conn)[4], s::toString);
                assertEquals("server", s.row(conn)[1], s::toString);
                HotAttachIT.awaitMoreRounds(client, 1, 0); // and it echoes, once the server's wait is over
                HotAttachIT.send(client, "quit");
                assertEquals(0, client.await(60_000), client::describe);
            }
        }
    }
}
