package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code FileChannel.transferTo}/{@code transferFrom} on paired channels between two attached JVMs
 * ({@code FileTransferPeer}): the client sends a file with {@code transferTo} to its blocking channel
 * and the server receives it with {@code transferFrom}; the server sends another with
 * {@code transferTo} to its non-blocking channel (until full, then with a selector) and the client
 * receives it with {@code transferFrom}. Every byte of both files arrives exact, both traces say
 * {@code path=shm}, and the fast connection's byte counts are the files' sizes: nothing went to the
 * TCP connection (which the JDK's sendfile path would use, and the peer never reads).
 */
class FileTransferIT {
    private static final String APP = "io.sora.it.apps.FileTransferPeer";
    private static final long UP = (5 << 20) + 12_345;
    private static final long DOWN = (3 << 20) + 777;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void filesSentWithTransferToAndReceivedWithTransferFromGoOverShm(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        Path dir = Files.createDirectory(tmp.resolve("files"));
        ForkedJvm server = ForkedJvm.start(jdk, ForkedPair.agent(tmp, "shm accept 127.0.0.1 * wait=2s", serverTrace),
                ForkedJvm.testClasses().toString(), APP, "server", dir.toString());
        try {
            String port = ForkedPair.awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, ForkedPair.agent(tmp, "shm connect 127.0.0.1 * wait=2s", clientTrace),
                    ForkedJvm.testClasses().toString(), APP, "client", port, dir.toString())) {
                String both = "\n" + client.describe() + "\n" + server.describe();
                assertEquals(0, client.await(60_000), both);
                assertEquals(0, server.await(60_000), both);
                assertTrue(client.stdout().contains("OK") && server.stdout().contains("OK"), both);
                assertTrue(server.stdout().contains("PATH shm") && client.stdout().contains("PATH shm"), both);
                assertTrue(server.stdout().stream().anyMatch(l -> l.startsWith("FULL ")), both);
                assertEquals(List.of(), server.stderr(), "the agent printed nothing on a healthy run" + both);
                assertEquals(List.of(), client.stderr(), "the agent printed nothing on a healthy run" + both);
            }
        } finally {
            server.close();
        }
        for (Path file : List.of(serverTrace, clientTrace)) {
            List<TraceEvent> events = TraceReader.read(file).events();
            List<TraceEvent> paths = events.stream().filter(e -> e.hook().equals("path")).toList();
            assertEquals(1, paths.size(), "one connection in " + file + ": " + paths);
            assertEquals("shm", paths.get(0).path(), file + ": " + paths.get(0));
            boolean isServer = file.equals(serverTrace);
            String counts = "sent=" + (isServer ? DOWN : UP) + " received=" + (isServer ? UP : DOWN);
            assertTrue(events.stream().anyMatch(e -> e.hook().equals("conn_close") && e.detail().contains(counts)),
                    counts + " in " + file + ": " + events.stream().filter(e -> e.hook().equals("conn_close")).toList());
        }
    }
}
