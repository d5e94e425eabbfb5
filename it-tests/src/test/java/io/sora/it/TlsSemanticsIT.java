package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The JDK's own TLS sockets on the fast path behave as over TCP: {@code TlsSemanticsApp}'s cases (round trips,
 * a bulk transfer and TLS 1.3's half-close, a read timeout, closes seen by a blocked read and by the other
 * side, an abortive close, writes after the peer's close, {@code HttpsURLConnection} kept alive) print the
 * same lines without the agent (TCP) and with it (shm rules for every loopback port), and with it every one
 * of the connections is paired, both ends (until 2026-11-30 these sockets stayed on TCP).
 */
class TlsSemanticsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void theJdksTlsSocketsPairAndBehaveAsOverTcp(Path jdk) throws Exception {
        Path conf = tmp.resolve("loop.conf");
        Files.writeString(conf, "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        Path trace = tmp.resolve("t.json");
        Path tcpDir = Files.createDirectory(tmp.resolve("tcp"));
        Path shmDir = Files.createDirectory(tmp.resolve("shm"));
        List<String> overTcp = run(jdk, List.of(), tcpDir);
        List<String> overShm = run(jdk, SamplePair.agent("conf=" + conf, "trace=iprint=NET", "trace.file=" + trace), shmDir);

        assertTrue(overTcp.size() >= 10 && overTcp.stream().noneMatch(l -> l.contains("FAILED") || l.contains("no outcome")),
                String.join("\n", overTcp));
        assertTrue(overTcp.contains("echo: 200 exact | server: echoed 200"), String.join("\n", overTcp));
        assertTrue(overTcp.contains("https-keep-alive: 20 of 20 bodies exact, served 20"), String.join("\n", overTcp));
        assertEquals(String.join("\n", overTcp), String.join("\n", overShm), "the same outcomes over TCP and through sora");

        int connections = Integer.parseInt(overShm.get(overShm.size() - 1).substring("CONNECTIONS ".length()));
        List<String> paths = Files.readAllLines(trace).stream().filter(e -> e.contains("\"hook\":\"path\"")).collect(Collectors.toList());
        String all = String.join("\n", paths);
        assertEquals(2 * connections, paths.size(), all);
        assertEquals(2 * connections, paths.stream().filter(e -> e.contains("\"path\":\"shm\"")).count(), all);
    }

    private List<String> run(Path jdk, List<String> jvmArgs, Path dir) throws Exception {
        try (ForkedJvm app = ForkedJvm.start(jdk, jvmArgs, ForkedJvm.testClasses().toString(), "io.sora.it.apps.TlsSemanticsApp",
                dir.toString())) {
            assertEquals(0, app.await(180_000), app.describe());
            assertTrue(app.stderr().stream().noneMatch(l -> l.startsWith("[sora] WARN") || l.startsWith("[sora] ERROR")), app.describe());
            return app.stdout();
        }
    }
}
