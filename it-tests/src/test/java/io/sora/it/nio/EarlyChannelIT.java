package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A client whose {@code main} connects a socket channel at once, while the agent starts beside it, and
 * keeps it open: paired on shm on every JDK, the start gate holding the JDK's selector provider (which
 * makes the channel) until the agent is up. Until 2026-11-29 the gate held the channel class itself, which
 * it could not on JDK 22+ (the JDK's own file streams load it: docs/reliability.md, bugs 12 and 56), and
 * such a channel stayed on TCP there, with a warning. With {@code -Dsora.startup.background=false}, shm too.
 */
class EarlyChannelIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aChannelConnectedDuringTheStartIsPaired(Path jdk) throws Exception {
        int port = freePort();
        List<String> client = run(jdk, port, List.of());
        assertTrue(client.contains("PATH shm"), client.toString());
        assertEquals(List.of(), client.stream().filter(l -> l.startsWith("[sora] WARN")).collect(Collectors.toList()),
                client.toString());
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void startingBeforeMainPairsIt(Path jdk) throws Exception {
        int port = freePort();
        List<String> client = run(jdk, port, List.of("-Dsora.startup.background=false"));
        assertTrue(client.contains("PATH shm"), client.toString());
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The client's stdout and stderr lines, after both ends ended well. */
    private List<String> run(Path jdk, int port, List<String> clientExtra) throws Exception {
        Path s = Files.writeString(tmp.resolve("s.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path c = Files.writeString(tmp.resolve("c.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + s), cp,
                "io.sora.it.apps.EchoPeer", "server", "" + port, "client")) {
            server.awaitLine("READY", 60_000);
            List<String> args = new ArrayList<>(List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + c));
            args.addAll(clientExtra);
            try (ForkedJvm client = ForkedJvm.start(jdk, args, cp, "io.sora.it.apps.EchoPeer", "client", "" + port, "client",
                    "channel", "linger")) {
                assertEquals(0, client.await(60_000), client.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertTrue(client.stdout().contains("AGENT UP") && client.stdout().contains("OK"), client.describe());
                List<String> out = new ArrayList<>(client.stdout());
                out.addAll(client.stderr());
                return out;
            }
        }
    }
}
