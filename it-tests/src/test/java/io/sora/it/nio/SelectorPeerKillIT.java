package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A selector server's paired channel, its selector asleep (armed) on the connection, and the client
 * process killed (SIGKILL): the selector wakes and the read returns the end (-1, or an exception),
 * never a hang. While a selector polls a connection's bell itself, the JVM's doorbell thread watches
 * that channel for the peer's hang-up only (docs/nio.md): this is what must still see the death.
 */
class SelectorPeerKillIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(180)
    void aKilledClientEndsTheSelectorServersRead(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        String cp = ForkedJvm.testClasses().toString();
        String app = "io.sora.it.apps.SelectorVictimPeer";
        try (ForkedJvm server = ForkedJvm.start(jdk, ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace), cp, app, "server")) {
            String port = ForkedPair.awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, ForkedPair.agent(tmp, "shm connect 127.0.0.1 * wait=2s", tmp.resolve("client.json")),
                    cp, app, "client", port)) {
                client.awaitLine("READY", 60_000);
                server.awaitLine("ECHOED 20000", 30_000);
                assertTrue(server.stdout().contains("PATH shm"), server::describe);
                client.process().destroyForcibly();
                client.await(30_000);
            }
            assertEquals(0, server.await(60_000), "the server's selector never saw the client's death: " + server.describe());
            List<String> out = new ArrayList<>(server.stdout());
            assertTrue(out.contains("EOF") || out.stream().anyMatch(l -> l.startsWith("RESET ")), server::describe);
        }
    }
}
