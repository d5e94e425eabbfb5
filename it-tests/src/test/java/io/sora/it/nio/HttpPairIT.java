package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.it.apps.HttpPeer;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Programs no one here wrote, both ends attached: the JDK's {@code com.sun.net.httpserver.HttpServer}
 * (a selector thread and non-blocking accept) and {@code java.net.http.HttpClient} (non-blocking
 * connect and reads on its own selector thread), through {@code HttpPeer}. Every echoed byte is
 * checked by the client (up to a 4 MiB body); every connection in both traces is on shm, and the
 * server's byte counts cover the bodies. Without the agent on the client, the server stays on TCP.
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
        ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(),
                ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace),
                ForkedPair.agent(tmp, "shm connect 127.0.0.1 * wait=2s", clientTrace), ForkedPair.ANY_LINE);
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> paths = ForkedPair.paths(file);
            assertFalse(paths.isEmpty(), "a connection in " + file);
            for (TraceEvent e : paths) assertEquals("shm", e.path(), file + ": " + paths);
        }
        long bodies = 0;
        for (int size : HttpPeer.SIZES) bodies += size;
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
        ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(),
                ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace), List.of(), ForkedPair.ANY_LINE);
        List<TraceEvent> paths = ForkedPair.paths(serverTrace);
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
}
