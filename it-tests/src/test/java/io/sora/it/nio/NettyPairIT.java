package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.it.apps.NettyPeer;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Netty's NIO transport, both ends attached ({@code NettyPeer}: an echo server and a client, each on
 * one event loop: non-blocking connect and accept, reads and writes from the event loop, a channel
 * registered with its selector before it connects, Netty's replaced selected-key set). Every echoed
 * byte is checked by the client; the connection is on shm in both traces, and the server's byte
 * counts are the payload's. Without the agent on the client, the server stays on TCP.
 */
class NettyPairIT {
    private static final String APP = "io.sora.it.apps.NettyPeer";
    /** Netty itself warns about sun.misc.Unsafe on JDK 25: only the agent's lines count. */
    private static final Predicate<String> AGENT_LINES = l -> l.contains("sora");

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void nettyEchoOverNioGoesOverShm(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        ForkedPair.run(jdk, APP, ForkedJvm.testClassesWith("netty-"),
                ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace),
                ForkedPair.agent(tmp, "shm connect 127.0.0.1 * wait=2s", clientTrace), AGENT_LINES);
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> paths = ForkedPair.paths(file);
            assertEquals(1, paths.size(), "one connection in " + file + ": " + paths);
            assertEquals("shm", paths.get(0).path(), file + ": " + paths);
        }
        long payload = NettyPeer.BYTES;
        List<TraceEvent> closes = TraceReader.read(serverTrace).events().stream().filter(e -> e.hook().equals("conn_close")).toList();
        assertEquals(1, closes.size(), closes.toString());
        assertTrue(closes.get(0).detail().contains("sent=" + payload + " received=" + payload), closes.toString());
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aClientWithoutTheAgentLeavesTheServerOnTcp(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        ForkedPair.run(jdk, APP, ForkedJvm.testClassesWith("netty-"),
                ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace), List.of(), AGENT_LINES);
        List<TraceEvent> paths = ForkedPair.paths(serverTrace);
        assertFalse(paths.isEmpty(), "a connection in " + serverTrace);
        for (TraceEvent e : paths) {
            assertEquals("tcp", e.path(), paths.toString());
            assertTrue(e.reason().contains("announced no pairing"), paths.toString());
        }
    }
}
