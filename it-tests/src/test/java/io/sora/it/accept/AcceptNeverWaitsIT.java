package io.sora.it.accept;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A server with an shm accept rule and a pairing wait of 60 s serves 200 clients without sora and 200
 * attached clients, from two client JVMs running at once (so their connections interleave): every byte
 * is exact, every attached connection is on shm at both ends, and every plain one was decided TCP
 * because no pairing had been announced, not because a wait ran out. (Were the server to wait for
 * plain clients, 200 of them would take 200 minutes: the test's timeout fails it.) The accept time as
 * such is the benchmark's {@code setup} row.
 */
class AcceptNeverWaitsIT {
    private static final Pattern PATH = Pattern.compile("\"hook\":\"path\".*?\"path\":\"(\\w+)\"(?:,\"reason\":\"([^\"]*)\")?");

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(240)
    void plainAndAttachedClientsInterleavedNoPlainClientWaits(Path jdk) throws Exception {
        int port = freePort();
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=60s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=60s\n");
        Path serverTrace = tmp.resolve("server.trace");
        Path clientTrace = tmp.resolve("client.trace");
        String cp = ForkedJvm.testClasses().toString();
        List<String> serverJvm = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + serverConf,
                "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + serverTrace);
        try (ForkedJvm server = ForkedJvm.start(jdk, serverJvm, cp, "io.sora.it.ops.EchoServerApp", "" + port, "200")) {
            server.awaitLine("READY", 60_000);
            List<String> attachedJvm = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf,
                    "-Dsora.trace=iprint=NET,iprint=JSOR", "-Dsora.trace.file=" + clientTrace);
            try (ForkedJvm plain = ForkedJvm.start(jdk, List.of(), cp, SequentialEchoClient.class.getName(), "" + port, "200", "3000", "1");
                 ForkedJvm attached = ForkedJvm.start(jdk, attachedJvm, cp, SequentialEchoClient.class.getName(), "" + port, "200", "3000", "2")) {
                assertEquals(0, plain.await(200_000), plain::describe);
                assertEquals(0, attached.await(200_000), attached::describe);
                assertEquals(List.of("OK 200"), plain.stdout(), plain::describe);
                assertEquals(List.of("OK 200"), attached.stdout(), attached::describe);
            }
            List<String[]> client = paths(clientTrace);
            // the server's events are written as its connections are decided; all 400 are there by
            // the time both clients got every echo back
            List<String[]> served = paths(serverTrace);
            assertEquals(200, client.size(), "path events of the attached client");
            // a failure names the server's side too: why it decided TCP for an attached client
            assertTrue(client.stream().allMatch(p -> p[0].equals("shm")), () -> "attached client paths: " + summary(client)
                    + "; server paths: " + summary(served));
            long shm = served.stream().filter(p -> p[0].equals("shm")).count();
            List<String[]> tcp = served.stream().filter(p -> p[0].equals("tcp")).toList();
            assertEquals(200, shm, () -> "server shm paths: " + summary(served));
            assertEquals(200, tcp.size(), () -> "server tcp paths: " + summary(served));
            assertTrue(tcp.stream().allMatch(p -> p[1] != null && p[1].startsWith("client announced no pairing")),
                    () -> "every plain client decided without a wait: " + summary(tcp));
            // one client after another: the attached ones pair on channels and segments kept from earlier
            // connections (docs/shm.md, "Kept for the next connection"), every byte still exact (above)
            long kept = Files.readAllLines(clientTrace, StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains("\"hook\":\"shm_segment_map\"") && l.contains("kept ")).count();
            System.out.println("AcceptNeverWaitsIT: " + kept + " of 200 attached connections on a kept segment");
            assertTrue(kept > 0, "no attached connection paired on a kept channel");
        }
    }

    private static List<String[]> paths(Path trace) throws IOException {
        return Files.readAllLines(trace, StandardCharsets.UTF_8).stream().map(PATH::matcher).filter(Matcher::find)
                .map(m -> new String[] {m.group(1), m.group(2)}).toList();
    }

    private static String summary(List<String[]> paths) {
        return paths.stream().map(p -> p[0] + "(" + p[1] + ")").distinct().toList() + " of " + paths.size();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
