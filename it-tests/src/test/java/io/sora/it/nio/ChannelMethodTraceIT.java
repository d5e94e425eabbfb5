package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * With the mt trace on, a channel pair's life cycle is in the trace as for sockets: each traced channel
 * method's entry and exit (server: bind, accept, close; client: connect, close), entries and exits
 * balanced, the connection's NET path decision between the connect's entry and exit, and the bytes as
 * exact as without the trace ({@code ChannelPeer} checks them).
 */
class ChannelMethodTraceIT {
    private static final String APP = "io.sora.it.apps.ChannelPeer";

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void channelMethodsAreTracedAroundWhatSoraDoes(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        ForkedPair p = ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(),
                args("shm accept 127.0.0.1 * wait=2s", serverTrace, "s"),
                args("shm connect 127.0.0.1 * wait=2s", clientTrace, "c"), ForkedPair.ANY_LINE);
        assertTrue(p.server.stdout().contains("PATH shm"), p.describe());
        assertTrue(p.client.stdout().contains("PATH shm"), p.describe());

        List<TraceEvent> server = TraceReader.read(serverTrace).events();
        List<String> smt = mt(server);
        assertTrue(smt.contains("> java/nio/channels/ServerSocketChannel.bind") && smt.contains("< java/nio/channels/ServerSocketChannel.bind"), smt.toString());
        assertTrue(smt.contains("> java/nio/channels/ServerSocketChannel.accept") && smt.contains("< java/nio/channels/ServerSocketChannel.accept"), smt.toString());
        assertBalanced(smt);

        List<TraceEvent> client = TraceReader.read(clientTrace).events();
        List<String> cmt = mt(client);
        assertBalanced(cmt);
        // the connect's entry, then sora's path decision, then the connect's exit
        int enter = indexOf(client, "connect", ">");
        int path = indexOfHook(client, "path");
        int exit = indexOf(client, "connect", "<");
        assertTrue(enter >= 0 && enter < path && path < exit, "connect entry " + enter + ", path " + path + ", exit " + exit + ": " + cmt);
        assertTrue(cmt.contains("> java/nio/channels/SocketChannel.close") && cmt.contains("< java/nio/channels/SocketChannel.close"), cmt.toString());
    }

    private List<String> args(String rule, Path trace, String side) throws Exception {
        Path conf = Files.writeString(tmp.resolve(side + ".conf"), rule + "\n");
        return List.of("-javaagent:" + ForkedJvm.agentJar(), "-Dsora.conf=" + conf, "-Dsora.nio.pairingWaitMillis=2000",
                "-Dsora.trace=iprint=mt+iprint=NET", "-Dsora.trace.file=" + trace);
    }

    /** The channel mt events, as "> name" / "< name", in order. */
    private static List<String> mt(List<TraceEvent> events) {
        return events.stream().filter(e -> e.hook().startsWith("java/nio/channels/"))
                .map(e -> e.dir() + " " + e.hook()).collect(Collectors.toList());
    }

    private static void assertBalanced(List<String> mt) {
        for (String name : mt.stream().map(s -> s.substring(2)).distinct().collect(Collectors.toList())) {
            long in = mt.stream().filter(s -> s.equals("> " + name)).count();
            long out = mt.stream().filter(s -> s.equals("< " + name)).count();
            assertEquals(in, out, name + " entries and exits in " + mt);
        }
    }

    private static int indexOf(List<TraceEvent> events, String method, String dir) {
        for (int i = 0; i < events.size(); i++) {
            TraceEvent e = events.get(i);
            if (e.hook().equals("java/nio/channels/SocketChannel." + method) && e.dir().equals(dir)) return i;
        }
        return -1;
    }

    private static int indexOfHook(List<TraceEvent> events, String hook) {
        for (int i = 0; i < events.size(); i++) if (events.get(i).hook().equals(hook)) return i;
        return -1;
    }
}
