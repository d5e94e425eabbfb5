package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A running TLS server (the JDK's {@code SSLServerSocket}, started without any agent flag, its accept already
 * waiting) gets the agent by a hot attach: the connections of TLS clients attached with an shm rule pair at
 * both ends, the first (taken by the accept begun before the attach, so decided at its first stream) and the
 * next two (through the patched accept), every byte checked.
 */
class HotAttachTlsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(300)
    void aRunningTlsServersConnectionsPairAfterAnAttach(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        Path serverTrace = tmp.resolve("server.trace");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.TlsEchoServerApp", "" + port, "3", tmp.toString())) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            SoraCli attach = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf + ",trace=iprint=NET,trace.file=" + serverTrace);
            assertEquals(0, attach.exit, attach::toString);
            for (int i = 0; i < 3; i++) {
                Path clientTrace = tmp.resolve("client" + i + ".trace");
                List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf
                        + ",trace=iprint=NET,trace.file=" + clientTrace);
                String local;
                try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.TlsEchoClientApp", "" + port, tmp.toString())) {
                    assertEquals(0, client.await(120_000), client::describe);
                    local = HotAttachIT.awaitPrefix(client, "OK ").substring(3);
                }
                List<String> paths = paths(clientTrace);
                assertEquals(1, paths.size(), String.join("\n", paths));
                assertTrue(paths.get(0).contains("\"path\":\"shm\"") && paths.get(0).contains("local=/127.0.0.1:" + local + " "),
                        "connection " + i + ": " + paths.get(0));
                List<String> served = awaitServerPath(serverTrace, local);
                assertTrue(served.get(0).contains("\"path\":\"shm\""), "connection " + i + " at the server: " + served);
            }
            assertEquals(0, server.await(60_000), server::describe);
        }
    }

    private static List<String> paths(Path trace) throws Exception {
        return Files.readAllLines(trace).stream().filter(e -> e.contains("\"hook\":\"path\"")).collect(Collectors.toList());
    }

    /** The server's path event of the connection from {@code localPort} (written by its accepting thread: waited for). */
    private static List<String> awaitServerPath(Path trace, String localPort) throws Exception {
        for (int i = 0; i < 1000; i++) {
            if (Files.exists(trace)) {
                List<String> m = paths(trace).stream().filter(e -> e.contains("remote=/127.0.0.1:" + localPort + "\""))
                        .collect(Collectors.toList());
                if (!m.isEmpty()) return m;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no server path event for the connection from port " + localPort + " in " + trace);
    }
}
