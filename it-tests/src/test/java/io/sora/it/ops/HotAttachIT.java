package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator's cycle on a server started without any agent flag: attach, a client (with the agent and
 * an shm rule) pairs and status shows it on shm with growing byte counts; detach, a new client is on TCP
 * while the first still echoes; attach again, a third client pairs.
 */
class HotAttachIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(300)
    void attachStatusDetachAttachAgain(Path jdk) throws Exception {
        int port = freePort();
        // wait=2s: the first pairing of a cold JVM takes 80-100 ms here, as long as the default wait
        Path serverConf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.EchoServerApp", "" + port, "240")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());

            SoraCli attach = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf);
            assertEquals(0, attach.exit, attach::toString);
            assertTrue(attach.out.startsWith("sora attached to " + pid), attach::toString);
            assertTrue(attach.out.contains("shm   available"), attach::toString);

            // no -Dsora.jmx.delay: the client's bean is registered when status first asks (StatusBeanOnDemandIT)
            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.ChattyClient", "" + port, "240")) {
                client.awaitLine("READY", 60_000);
                String first = open(client, 1);

                SoraCli s1 = SoraCli.run(jdk, "status", pid);
                assertEquals(0, s1.exit, s1::toString);
                String[] row = s1.row(first);
                assertEquals("server", row[1], s1::toString);
                assertEquals("shm", row[4], s1::toString);
                assertEquals("open", row[8], s1::toString);
                long before = Long.parseLong(row[5]);
                long rounds = awaitMoreRounds(client, 1, 0);
                SoraCli s2 = awaitStatusBytesAbove(jdk, pid, first, before);
                assertTrue(Long.parseLong(s2.row(first)[6]) > 0, s2::toString);
                SoraCli c1 = SoraCli.run(jdk, "status", Long.toString(client.process().pid()));
                assertEquals("shm", c1.row(first)[4], c1::toString);
                assertEquals("client", c1.row(first)[1], c1::toString);

                SoraCli detach = SoraCli.run(jdk, "detach", pid);
                assertEquals(0, detach.exit, detach::toString);
                assertTrue(detach.out.contains("1 connection on a fast path keeps it until closed"), detach::toString);
                SoraCli gone = SoraCli.run(jdk, "status", pid);
                assertEquals(1, gone.exit, gone::toString);
                assertTrue(gone.err.contains("sora is not attached to " + pid), gone::toString);

                String second = open(client, 2);
                SoraCli c2 = SoraCli.run(jdk, "status", Long.toString(client.process().pid()));
                assertEquals("tcp", c2.row(second)[4], c2::toString);
                assertTrue(c2.row(second)[9].contains("no sora listener"), c2::toString);
                assertEquals("shm", c2.row(first)[4], c2::toString);
                awaitMoreRounds(client, 1, rounds);   // the first connection still works, on shm
                awaitMoreRounds(client, 2, 0);        // and the new one on TCP

                SoraCli again = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf);
                assertEquals(0, again.exit, again::toString);
                String third = open(client, 3);
                SoraCli s3 = SoraCli.run(jdk, "status", pid);
                assertEquals("shm", s3.row(third)[4], s3::toString);
                assertEquals(1, s3.rows().size(), "connections from before this attach are not listed:\n" + s3);
                awaitMoreRounds(client, 3, 0);
                awaitMoreRounds(client, 1, 0);

                SoraCli twice = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf);
                assertEquals(1, twice.exit, twice::toString);
                assertTrue(twice.err.contains("sora is already attached to " + pid), twice::toString);

                send(client, "quit");
                assertEquals(0, client.await(60_000), client::describe);
                assertTrue(client.stdout().stream().noneMatch(l -> l.startsWith("FAILED") || l.startsWith("MISMATCH")), client::describe);
            }
            assertTrue(server.stdout().stream().noneMatch(l -> l.contains("sora")), server::describe);
            assertTrue(server.stderr().stream().allMatch(HotAttachIT::documentedWarning), server::describe);
        }
    }

    /**
     * The only lines sora's attach may leave on the target's stderr: JDK 21+'s notice about a dynamically
     * loaded agent (docs/operations.md says why and how to silence it).
     */
    static boolean documentedWarning(String line) {
        return line.startsWith("WARNING: A Java agent has been loaded dynamically")
                || line.startsWith("WARNING: If a serviceability tool is in use, please run with -XX:+EnableDynamicAgentLoading")
                || line.startsWith("WARNING: If a serviceability tool is not in use, please run with -Djdk.instrument.traceUsage")
                || line.startsWith("WARNING: Dynamic loading of agents will be disallowed by default in a future release");
    }

    static String open(ForkedJvm client, int n) throws Exception {
        return open(client, n, "127.0.0.1");
    }

    /** Connection {@code n} of a client connecting to {@code address}, as {@code address:localPort}. */
    static String open(ForkedJvm client, int n, String address) throws Exception {
        send(client, "open");
        String line = awaitPrefix(client, "OPENED " + n + " ");
        return address + ":" + line.substring(line.lastIndexOf(' ') + 1);
    }

    static long awaitMoreRounds(ForkedJvm client, int n, long than) throws Exception {
        for (int i = 0; i < 200; i++) {
            int seen = client.stdout().size();
            send(client, "count " + n);
            String line = awaitNew(client, seen, "COUNT " + n + " ");
            long rounds = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            if (rounds > than) {
                return rounds;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("connection " + n + " made no round trip beyond " + than + ": " + client.describe());
    }

    private static SoraCli awaitStatusBytesAbove(Path jdk, String pid, String conn, long bytes) throws Exception {
        SoraCli s = null;
        for (int i = 0; i < 20; i++) {
            s = SoraCli.run(jdk, "status", pid);
            if (s.exit == 0 && Long.parseLong(s.row(conn)[5]) > bytes) {
                return s;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("bytes sent on " + conn + " did not grow beyond " + bytes + ":\n" + s);
    }

    static void send(ForkedJvm jvm, String command) throws IOException {
        OutputStream in = jvm.process().getOutputStream();
        in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** The first stdout line starting with {@code prefix}, waiting at most 30 s. */
    static String awaitPrefix(ForkedJvm jvm, String prefix) throws InterruptedException {
        for (int i = 0; i < 3000; i++) {
            for (String l : jvm.stdout()) {
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no line '" + prefix + "...': " + jvm.describe());
    }

    /** The newest stdout line starting with {@code prefix} after the first {@code seen} lines. */
    private static String awaitNew(ForkedJvm jvm, int seen, String prefix) throws InterruptedException {
        for (int i = 0; i < 3000; i++) {
            List<String> lines = jvm.stdout();
            for (int j = lines.size() - 1; j >= seen; j--) {
                if (lines.get(j).startsWith(prefix)) {
                    return lines.get(j);
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no new line '" + prefix + "...': " + jvm.describe());
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
