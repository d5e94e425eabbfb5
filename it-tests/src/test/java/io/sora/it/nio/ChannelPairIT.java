package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two JVMs, each with the agent and a shm rule, talk over blocking NIO channels ({@code ChannelPeer}):
 * every byte arrives exact, both traces say {@code path=shm}, and the byte counts of the fast
 * connection are those of the whole conversation. Without the agent on the client, both ends stay TCP
 * with the same bytes. Boot classes are verified in these JVMs, so the patched JDK classes are too.
 */
class ChannelPairIT {
    private static final String APP = "io.sora.it.apps.ChannelPeer";
    private static final long UP = 4 << 20;
    private static final long DOWN = (1 << 20) + 32;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void blockingChannelsOfTwoAttachedJvmsGoOverShm(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        Pair p = run(jdk, agent("shm accept 127.0.0.1 * wait=2s", serverTrace), agent("shm connect 127.0.0.1 * wait=2s", clientTrace));
        assertTrue(p.server.stdout().contains("PATH shm"), p.describe());
        assertTrue(p.client.stdout().contains("PATH shm"), p.describe());
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> events = TraceReader.read(file).events();
            List<TraceEvent> paths = events.stream().filter(e -> e.hook().equals("path")).collect(Collectors.toList());
            assertEquals(1, paths.size(), "one connection in " + file + ": " + paths);
            assertEquals("shm", paths.get(0).path(), file + ": " + paths.get(0));
            boolean server = file.equals(serverTrace);
            String counts = "sent=" + (server ? DOWN : UP) + " received=" + (server ? UP : DOWN);
            assertTrue(events.stream().anyMatch(e -> e.hook().equals("conn_close") && e.detail().contains(counts)),
                    counts + " in " + file + ": " + events.stream().filter(e -> e.hook().equals("conn_close")).toList());
        }
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aClientWithoutTheAgentLeavesBothEndsOnTcp(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Pair p = run(jdk, agent("shm accept 127.0.0.1 * wait=2s", serverTrace), List.of());
        assertTrue(p.server.stdout().contains("PATH tcp"), p.describe());
        assertTrue(p.client.stdout().contains("PATH no-agent"), p.describe());
        List<TraceEvent> paths = TraceReader.read(serverTrace).events().stream().filter(e -> e.hook().equals("path")).toList();
        assertEquals(1, paths.size(), paths.toString());
        assertEquals("tcp", paths.get(0).path(), paths.toString());
    }

    private List<String> agent(String rule, Path trace) throws Exception {
        Path conf = Files.createTempFile(tmp, "rules", ".conf");
        Files.writeString(conf, rule + "\n");
        // the JVM verifies boot classes too: a wrong stack-map frame in the patched NIO classes (which a
        // retransformed or load-time-patched boot class is otherwise not checked for) fails the run
        return List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+BytecodeVerificationLocal",
                "-javaagent:" + ForkedJvm.agentJar(), "-Dsora.conf=" + conf,
                "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + trace);
    }

    private record Pair(ForkedJvm server, ForkedJvm client) {
        String describe() {
            return server.describe() + "\n" + client.describe();
        }
    }

    private static Pair run(Path jdk, List<String> serverArgs, List<String> clientArgs) throws Exception {
        ForkedJvm server = ForkedJvm.start(jdk, serverArgs, ForkedJvm.testClasses().toString(), APP, "server");
        try {
            String port = awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, ForkedJvm.testClasses().toString(), APP, "client", port)) {
                assertEquals(0, client.await(60_000), client.describe() + "\n" + server.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertTrue(client.stdout().contains("OK") && server.stdout().contains("OK"), server.describe() + client.describe());
                assertEquals(List.of(), server.stderr(), "the agent printed nothing on a healthy run");
                return new Pair(server, client);
            }
        } finally {
            server.close();
        }
    }

    private static String awaitPort(ForkedJvm server) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (String l : new ArrayList<>(server.stdout())) {
                if (l.startsWith("PORT ")) return l.substring(5);
            }
            if (!server.process().isAlive()) break;
            Thread.sleep(20);
        }
        throw new AssertionError("no PORT line: " + server.describe());
    }
}
