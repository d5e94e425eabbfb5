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
 * A server socket bound before a hot attach and closed before it accepted anything since (an application
 * restarting its listener) takes its adopted listener with it: the server socket bound next on that port
 * gets its own, and its clients pair. Before, the adopted listener lived on until the detach (its thread
 * and rendezvous socket), and the new server socket's listener could not start beside it ("another sora
 * shm listener is live"): every client of it stayed on TCP (found in review, 2026-11-29).
 */
class HotAttachRebindIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(300)
    void aServerSocketClosedBeforeItsFirstAcceptTakesItsAdoptedListenerWithIt(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.RebindServerApp", "" + port, "240")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            SoraCli attach = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf);
            assertEquals(0, attach.exit, attach::toString);
            HotAttachIT.send(server, "rebind");
            server.awaitLine("REBOUND", 60_000);
            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.ChattyClient", "" + port, "240")) {
                client.awaitLine("READY", 60_000);
                String first = HotAttachIT.open(client, 1);
                SoraCli status = SoraCli.run(jdk, "status", pid);
                assertEquals(0, status.exit, status::toString);
                assertEquals("shm", status.row(first)[4], status + "\n" + server.describe());
                HotAttachIT.awaitMoreRounds(client, 1, 0);
                HotAttachIT.send(client, "quit");
                assertEquals(0, client.await(60_000), client::describe);
            }
            assertEquals(0, SoraCli.run(jdk, "detach", pid).exit);
            assertTrue(server.stderr().stream().allMatch(HotAttachIT::documentedWarning), server::describe);
        }
    }
}
