package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hot attach to a running NIO server (one selector, non-blocking channels, started without any agent
 * flag): a connection accepted before the attach stays on TCP and keeps echoing; one accepted after it
 * pairs on shm (status in both JVMs says so) and echoes every byte, beside the first.
 */
class HotAttachNioIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(300)
    void aRunningSelectorServerPairsTheConnectionsAcceptedAfterTheAttach(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.NioEchoServerApp", "" + port, "240")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.ChattyClient", "" + port, "240")) {
                client.awaitLine("READY", 60_000);
                String before = HotAttachIT.open(client, 1);
                long rounds = HotAttachIT.awaitMoreRounds(client, 1, 0);

                SoraCli attach = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf);
                assertEquals(0, attach.exit, attach::toString);
                String after = HotAttachIT.open(client, 2);
                HotAttachIT.awaitMoreRounds(client, 2, 0);
                HotAttachIT.awaitMoreRounds(client, 1, rounds); // the first still echoes, on TCP

                SoraCli s = SoraCli.run(jdk, "status", pid);
                assertEquals(0, s.exit, s::toString);
                assertEquals("shm", s.row(after)[4], s::toString);
                assertEquals("server", s.row(after)[1], s::toString);
                assertEquals(1, s.rows().size(), "a connection accepted before the attach is not listed:\n" + s);
                SoraCli c = SoraCli.run(jdk, "status", Long.toString(client.process().pid()));
                assertEquals("shm", c.row(after)[4], c::toString);
                assertEquals("tcp", c.row(before)[4], c::toString);

                HotAttachIT.send(client, "quit");
                assertEquals(0, client.await(60_000), client::describe);
                assertTrue(client.stdout().stream().noneMatch(l -> l.startsWith("FAILED") || l.startsWith("MISMATCH")), client::describe);
            }
            assertTrue(server.stderr().stream().allMatch(HotAttachIT::documentedWarning), server::describe);
        }
    }
}
