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
 * Programs no one here wrote, both ends attached: the JDK's {@code com.sun.net.httpserver.HttpServer}
 * (a selector thread and non-blocking accept) and {@code java.net.http.HttpClient} (non-blocking
 * connect and reads on its own selector thread), through {@code HttpPeer}. Every echoed byte is
 * checked by the client (up to a 4 MiB body); every connection in both traces is on shm, and the
 * server's byte counts are the conversation's. Without the agent on the client, both ends stay TCP.
 */
class HttpPairIT {
    private static final String APP = "io.sora.it.apps.HttpPeer";

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void theJdksHttpServerAndClientGoOverShm(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        run(jdk, agent("shm accept 127.0.0.1 * wait=2s", serverTrace), agent("shm connect 127.0.0.1 * wait=2s", clientTrace));
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> paths = paths(file);
            assertFalse(paths.isEmpty(), "a connection in " + file);
            for (TraceEvent e : paths) assertEquals("shm", e.path(), file + ": " + paths);
        }
        long echoed = 0;
        for (int size : io.sora.it.apps.HttpPeer.SIZES) echoed += size;
        long bodies = echoed;
        List<TraceEvent> closes = TraceReader.read(serverTrace).events().stream().filter(e -> e.hook().equals("conn_close")).toList();
        long received = closes.stream().mapToLong(e -> count(e.detail(), "received=")).sum();
        long sent = closes.stream().mapToLong(e -> count(e.detail(), "sent=")).sum();
        // request and response headers come on top of the bodies, each way
        assertTrue(received > bodies && sent > bodies, "server counts " + closes + " against bodies of " + bodies + " bytes");
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
        try (ForkedJvm server = ForkedJvm.start(jdk, serverArgs, ForkedJvm.testClasses().toString(), APP, "server")) {
            String port = awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, ForkedJvm.testClasses().toString(), APP, "client", port)) {
                assertEquals(0, client.await(120_000), client.describe() + "\n" + server.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertTrue(client.stdout().contains("OK") && server.stdout().contains("OK"), server.describe() + client.describe());
                assertEquals(List.of(), server.stderr(), "the agent printed nothing on a healthy run");
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
