package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import io.sora.trace.TraceEvent;
import io.sora.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A server JVM and a client JVM of one peer program ({@code APP server} prints {@code PORT n};
 * {@code APP client n}), as the NIO forked tests run them: each must exit 0 and print a line
 * starting with {@code OK}, and the server's stderr must hold none of the lines a test counts.
 */
final class ForkedPair {
    final ForkedJvm server;
    final ForkedJvm client;

    private ForkedPair(ForkedJvm server, ForkedJvm client) {
        this.server = server;
        this.client = client;
    }

    String describe() {
        return server.describe() + "\n" + client.describe();
    }

    /** Every stderr line counts (the agent prints nothing on a healthy run). */
    static final Predicate<String> ANY_LINE = l -> true;

    static ForkedPair run(Path jdk, String app, String classpath, List<String> serverArgs, List<String> clientArgs,
                          Predicate<String> stderrCounts) throws Exception {
        try (ForkedJvm server = ForkedJvm.start(jdk, serverArgs, classpath, app, "server")) {
            String port = awaitPort(server);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, classpath, app, "client", port)) {
                assertEquals(0, client.await(120_000), client.describe() + "\n" + server.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertTrue(client.stdout().contains("OK") && server.stdout().stream().anyMatch(l -> l.startsWith("OK")),
                        server.describe() + client.describe());
                assertEquals(List.of(), server.stderr().stream().filter(stderrCounts).toList(),
                        "the agent printed nothing on a healthy run");
                return new ForkedPair(server, client);
            }
        }
    }

    /**
     * The JVM options that attach the agent with {@code rule} as its rule file (written under
     * {@code dir}) and the NET trace into {@code trace}. Boot classes are verified in these JVMs, so
     * a wrong stack-map frame in the patched JDK classes (which a retransformed or load-time-patched
     * boot class is otherwise not checked for) fails the run. A non-blocking accept or connect waits
     * for its pairing up to the rule's wait here, not the default 20 ms cap
     * ({@code sora.nio.pairingWaitMillis}, a selector thread's trade-off): with the build's other
     * JVMs on the same two CPUs, an announced client's request once took longer than 20 ms and the
     * connection went to TCP on both ends (correctly, with the reason), failing a test that is about
     * the fast path.
     */
    static List<String> agent(Path dir, String rule, Path trace) throws Exception {
        Path conf = Files.createTempFile(dir, "rules", ".conf");
        Files.writeString(conf, rule + "\n");
        return List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+BytecodeVerificationLocal",
                "-javaagent:" + ForkedJvm.agentJar(), "-Dsora.conf=" + conf, "-Dsora.nio.pairingWaitMillis=2000",
                "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + trace);
    }

    /** The trace's path decisions. */
    static List<TraceEvent> paths(Path trace) throws Exception {
        return TraceReader.read(trace).events().stream().filter(e -> e.hook().equals("path")).toList();
    }

    static String awaitPort(ForkedJvm server) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (String l : new ArrayList<>(server.stdout())) {
                if (l.startsWith("PORT ")) return l.substring(5);
            }
            if (!server.process().isAlive()) break;
            Thread.sleep(20);
        }
        throw new AssertionError("no PORT line: " + server.describe());
    }
}
