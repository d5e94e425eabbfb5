package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two network namespaces that share the shm directory (two containers with a shared {@code /dev/shm} or
 * {@code -Dsora.shm.dir} volume), each with its own server on the same loopback port, both attached with
 * the same rules, as one user. A client in the first namespace connects to 127.0.0.1:PORT, which is its
 * own namespace's server: it must pair with that server, or stay on TCP, never with the other
 * namespace's. Before 2026-11-24 the rendezvous socket was named by the port alone: the second server
 * could not listen ("another sora shm listener is live"), and the client announced itself to the first
 * namespace's listener, which offered and took its COMMIT; the client wrote into a ring that no accept
 * would claim while its own server waited on TCP (the client's read timed out after the test's 20 s
 * SO_TIMEOUT; without one it hangs). The namespaces are made here with {@code ip netns} (needs root;
 * skipped with the reason otherwise).
 */
class NetnsIsolationIT {
    @TempDir
    Path tmp;

    private final List<String> namespaces = new ArrayList<>();

    @AfterEach
    void removeNamespaces() throws Exception {
        for (String ns : namespaces) run("ip", "netns", "delete", ns);
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aClientPairsOnlyWithTheServerOfItsOwnNetworkNamespace(Path jdk) throws Exception {
        String tag = Long.toString(ProcessHandle.current().pid()) + "-" + namespaces.size();
        String a = "sora-it-a-" + tag;
        String b = "sora-it-b-" + tag;
        String made = run("ip", "netns", "add", a);
        Assumptions.assumeTrue(made.isEmpty(), "cannot make a network namespace here (needs root and iproute2): " + made);
        namespaces.add(a);
        assertEquals("", run("ip", "netns", "add", b));
        namespaces.add(b);
        assertEquals("", run("ip", "-n", a, "link", "set", "lo", "up"));
        assertEquals("", run("ip", "-n", b, "link", "set", "lo", "up"));

        int port = Reliability.freePort();
        Path shm = Files.createDirectory(tmp.resolve("shm"));
        Path conf = Reliability.conf(tmp, "rules.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s",
                "shm connect 127.0.0.1 " + port + " wait=2s");
        // the other namespace's server first: before the fix its listener took the port's one name
        try (ForkedJvm other = ForkedJvm.startInNetworkNamespace(b, jdk, Reliability.agent(conf, shm, tmp.resolve("b.trace")),
                     Reliability.cp(), "io.sora.it.apps.EchoPeer", "server", "" + port, "client")) {
            other.awaitLine("READY", 60_000);
            try (ForkedJvm server = ForkedJvm.startInNetworkNamespace(a, jdk, Reliability.agent(conf, shm, tmp.resolve("a.trace")),
                         Reliability.cp(), "io.sora.it.apps.EchoPeer", "server", "" + port, "client")) {
                server.awaitLine("READY", 60_000);
                try (ForkedJvm client = ForkedJvm.startInNetworkNamespace(a, jdk, Reliability.agent(conf, shm, tmp.resolve("c.trace")),
                        Reliability.cp(), "io.sora.it.apps.EchoPeer", "client", "" + port, "client")) {
                    assertEquals(0, client.await(60_000), client.describe() + "\nserver: " + server.describe());
                    assertEquals(0, server.await(60_000), server.describe());
                    String clientPath = Reliability.require(client, "PATH");
                    String serverPath = Reliability.require(server, "PATH");
                    assertEquals(serverPath, clientPath, "both ends of the connection on one path");
                    assertEquals("shm", clientPath, "paired with its own namespace's server: " + client.describe());
                    assertTrue(client.stdout().contains("OK") && server.stdout().contains("OK"));
                }
            }
            assertTrue(other.isAlive(), "the other namespace's server never got a connection");
        }
    }

    /** Runs a command; returns its output when it failed, else "". */
    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return String.join(" ", cmd) + ": timed out";
        }
        return p.exitValue() == 0 ? "" : String.join(" ", cmd) + ": exit " + p.exitValue() + " " + out;
    }
}
