package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Path;
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
        ForkedPair p = run(jdk, ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace),
                ForkedPair.agent(tmp, "shm connect 127.0.0.1 * wait=2s", clientTrace));
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
        ForkedPair p = run(jdk, ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace), List.of());
        assertTrue(p.server.stdout().contains("PATH tcp"), p.describe());
        assertTrue(p.client.stdout().contains("PATH no-agent"), p.describe());
        List<TraceEvent> paths = TraceReader.read(serverTrace).events().stream().filter(e -> e.hook().equals("path")).toList();
        assertEquals(1, paths.size(), paths.toString());
        assertEquals("tcp", paths.get(0).path(), paths.toString());
    }

    private static ForkedPair run(Path jdk, List<String> serverArgs, List<String> clientArgs) throws Exception {
        return ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(), serverArgs, clientArgs, ForkedPair.ANY_LINE);
    }
}
