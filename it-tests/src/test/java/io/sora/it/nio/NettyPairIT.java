package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Netty's NIO transport, both ends attached ({@code NettyPeer}: an echo server and a client, each on
 * one event loop: non-blocking connect and accept, reads and writes from the event loop, Netty's
 * replaced selected-key set). Every echoed byte is checked by the client; the connection is on shm in
 * both traces, and the server's byte counts are the payload's. Without the agent on the client, TCP.
 */
class NettyPairIT {
    private static final String APP = "io.sora.it.apps.NettyPeer";

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void nettyEchoOverNioGoesOverShm(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        run(jdk, agent("shm accept 127.0.0.1 * wait=2s", serverTrace), agent("shm connect 127.0.0.1 * wait=2s", clientTrace));
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> paths = paths(file);
            assertFalse(paths.isEmpty(), "a connection in " + file);
            for (TraceEvent e : paths) assertEquals("shm", e.path(), file + ": " + paths);
        }
        long payload = io.sora.it.apps.NettyPeer.BYTES;
        List<TraceEvent> closes = TraceReader.read(serverTrace).events().stream().filter(e -> e.hook().equals("conn_close")).toList();
        assertEquals(1, closes.size(), closes.toString());
        assertTrue(closes.get(0).detail().contains("sent=" + payload + " received=" + payload), closes.toString());
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aClientWithoutTheAgentLeavesTheServerOnTcp(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        run(jdk, agent("shm accept 127.0.0.1 * wait=2s", serverTrace), List.of());
        List<TraceEvent> paths = paths(serverTrace);
        assertFalse(paths.isEmpty(), "a connection in " + serverTrace);
        for (TraceEvent e : paths) {
            assertEquals("tcp", e.path(), paths.toString());
            assertTrue(e.reason().contains("announced no pairing"), paths.toString());
        }
    }

    private static long count(String detail, String name) {
        int i = detail.indexOf(name);
        if (i < 0) return 0;
        int j = i + name.length();
        int k = j;
        while (k < detail.length() && Character.isDigit(detail.charAt(k))) k++;
        return Long.parseLong(detail.substring(j, k));
    }

    private static List<TraceEvent> paths(Path file) throws Exception {
        return TraceReader.read(file).events().stream().filter(e -> e.hook().equals("path")).toList();
    }

    private List<String> agent(String rule, Path trace) throws Exception {
        Path conf = Files.createTempFile(tmp, "rules", ".conf");
        Files.writeString(conf, rule + "\n");
        return List.of("-javaagent:" + ForkedJvm.agentJar(), "-Dsora.conf=" + conf,
                "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + trace);
    }

    private static void run(Path jdk, List<String> serverArgs, List<String> clientArgs) throws Exception {
        try (ForkedJvm server = ForkedJvm.start(jdk, serverArgs, ForkedJvm.testClassesWith("netty-"), APP, "server")) {
            String port = awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, ForkedJvm.testClassesWith("netty-"), APP, "client", port)) {
                assertEquals(0, client.await(120_000), client.describe() + "\n" + server.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertTrue(client.stdout().contains("OK") && server.stdout().stream().anyMatch(l -> l.startsWith("OK")), server.describe() + client.describe());
                // Netty itself warns about sun.misc.Unsafe on JDK 25: only the agent's lines count here
                assertEquals(List.of(), server.stderr().stream().filter(l -> l.contains("sora")).toList(),
                        "the agent printed nothing on a healthy run");
            }
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
