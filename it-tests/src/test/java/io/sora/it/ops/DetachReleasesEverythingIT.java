package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Detach gives everything back (issue 12). A server started without any agent flag goes through three
 * cycles of: attach, a client (with the agent) pairs over shm and echoes, detach while that connection
 * is still open (it keeps its fast path), then the client closes it. Afterwards, in the server's JVM:
 * no thread whose name starts with {@code sora-}, no agent class loader left after a full GC (the
 * JVM's own class histogram, which collects first), and no file in the shm directory. A fourth attach
 * loads everything again (a new agent class loader) and still pairs: the path in its trace is shm.
 *
 * <p>Everything is read from outside the server ({@code jcmd Thread.print}, {@code jcmd
 * GC.class_histogram}, the directory): the server is a plain application that knows nothing of sora.
 * Both JVMs use a shm directory of this test's own ({@code -Dsora.shm.dir}), because other JVMs of the
 * machine use the shared one at the same time.
 *
 * <p>The same over RDMA in the Soft-RoCE VM ({@code tools/rxe-vm/run-rdma-suite.sh}, part {@code detach}):
 * {@code -Dsora.detach.provider=rdma -Dsora.detach.address=192.168.77.1}; there a re-attach before any
 * GC must also load DiSNI's native library again, and the RDMA CM and completion threads must end.
 */
class DetachReleasesEverythingIT {
    private static final String AGENT_LOADER = "io.sora.agent.launcher.AgentClassLoader";
    private static final String NATIVE_LOADER = "io.sora.agent.launcher.NativeModules$Loader";
    private static final int CYCLES = 3;
    /** The fast path under test, {@code shm} (default) or {@code rdma}, and the address both ends use. */
    private static final String PROVIDER = System.getProperty("sora.detach.provider", "shm");
    private static final String ADDRESS = System.getProperty("sora.detach.address", "127.0.0.1");
    /** The rules' pairing wait: the first pairing of a cold JVM takes 80-100 ms here, as long as the default. */
    private static final String WAIT = System.getProperty("sora.detach.wait", "2s");

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(600)
    void attachServeDetachCyclesLeaveNoThreadLoaderOrFileAndAFourthAttachPairs(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path shm = Files.createDirectory(tmp.resolve("shm"));
        Path serverConf = Files.writeString(tmp.resolve("server.conf"),
                PROVIDER + " accept " + ADDRESS + " " + port + " " + ADDRESS + " wait=" + WAIT + "\n");
        Path clientConf = Files.writeString(tmp.resolve("client.conf"),
                PROVIDER + " connect " + ADDRESS + " " + port + " wait=" + WAIT + "\n");
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of("-Dsora.shm.dir=" + shm), cp,
                "io.sora.it.ops.EchoServerApp", "" + port, "380", ADDRESS)) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            assertEquals(0, loaders(jdk, pid, AGENT_LOADER), "no agent class loader before the first attach");

            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf,
                    "-Dsora.jmx.delay=0", "-Dsora.shm.dir=" + shm);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.it.ops.ChattyClient", "" + port, "380", ADDRESS)) {
                client.awaitLine("READY", 60_000);
                String attached = null;
                for (int n = 1; n <= CYCLES; n++) {
                    String conn = attachAndPair(jdk, pid, client, n, serverConf);
                    if (n == 1) {
                        // what the final checks look for is there while attached: they can fail
                        Leftovers now = new Leftovers(soraThreads(jdk, pid), loaders(jdk, pid, AGENT_LOADER),
                                loaders(jdk, pid, NATIVE_LOADER), files(shm));
                        assertEquals(1, now.agentLoaders, "one agent class loader while attached: " + now);
                        assertFalse(now.threads.isEmpty(), "sora's threads run while attached: " + now);
                        assertTrue(!PROVIDER.equals("shm") || !now.files.isEmpty(), "the listener's rendezvous socket is in " + shm + ": " + now);
                        attached = now.toString();
                    }
                    SoraCli detach = SoraCli.run(jdk, "detach", pid);
                    assertEquals(0, detach.exit, detach::toString);
                    assertTrue(detach.out.contains("1 connection on a fast path keeps it until closed"), detach::toString);
                    // the paired connection goes on over its fast path after the detach, then the application closes it
                    long rounds = HotAttachIT.awaitMoreRounds(client, n, 0);
                    HotAttachIT.awaitMoreRounds(client, n, rounds);
                    HotAttachIT.send(client, "close " + n);
                    HotAttachIT.awaitPrefix(client, "CLOSED " + n);
                    SoraCli clientStatus = SoraCli.run(jdk, "status", Long.toString(client.process().pid()));
                    assertEquals(PROVIDER, clientStatus.row(conn)[4], clientStatus::toString);
                }

                long t0 = System.nanoTime();
                Leftovers left = awaitNothingLeft(jdk, pid, shm, 60_000);
                System.out.println("DetachReleasesEverythingIT " + PROVIDER + " " + jdk.getFileName() + ": attached (1st cycle, one connection) "
                        + attached + "; after " + CYCLES + " cycles (looked for " + (System.nanoTime() - t0) / 1_000_000 + " ms): " + left);
                assertEquals(List.of(), left.threads, "sora threads left after " + CYCLES + " detaches: " + left);
                assertEquals(0, left.agentLoaders, "agent class loaders left after a full GC: " + left);
                assertEquals(0, left.nativeLoaders, "native-code module loaders left after a full GC: " + left);
                assertEquals(List.of(), left.files, "files left in " + shm + ": " + left);

                // a fourth attach loads the agent again (a new class loader, its native code too) and pairs
                int last = CYCLES + 1;
                Path trace = tmp.resolve("server-" + last + ".trace");
                attachAndPair(jdk, pid, client, last, serverConf);
                assertEquals(1, loaders(jdk, pid, AGENT_LOADER), "the fourth attach's class loader, and no other");
                HotAttachIT.send(client, "close " + last);
                HotAttachIT.awaitPrefix(client, "CLOSED " + last);
                SoraCli verify = awaitVerified(jdk, trace);
                assertTrue(verify.out.contains("1 connection"), verify::toString);

                HotAttachIT.send(client, "quit");
                assertEquals(0, client.await(60_000), client::describe);
                assertTrue(client.stdout().stream().noneMatch(l -> l.startsWith("FAILED") || l.startsWith("MISMATCH")), client::describe);
            }
            assertTrue(server.stderr().stream().allMatch(HotAttachIT::documentedWarning), server::describe);
        }
    }

    /** Attach number {@code n} (traced to {@code server-<n>.trace}) and a new client connection that must pair. */
    private String attachAndPair(Path jdk, String pid, ForkedJvm client, int n, Path serverConf) throws Exception {
        Path trace = tmp.resolve("server-" + n + ".trace");
        SoraCli attach = SoraCli.run(jdk, "attach", pid, "conf=" + serverConf + ",trace=iprint=NET,trace.file=" + trace);
        assertEquals(0, attach.exit, attach::toString);
        assertTrue(attach.out.contains(String.format("%-5s available", PROVIDER)), attach::toString);
        String conn = HotAttachIT.open(client, n, ADDRESS);
        HotAttachIT.awaitMoreRounds(client, n, 0);
        SoraCli status = SoraCli.run(jdk, "status", pid);
        assertEquals(0, status.exit, status::toString);
        assertEquals(PROVIDER, status.row(conn)[4], "attach " + n + ": " + status);
        return conn;
    }

    /** {@code verify --expect <provider>} on the trace, once the server wrote the connection's close (bounded). */
    private static SoraCli awaitVerified(Path jdk, Path trace) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            SoraCli verify = SoraCli.run(jdk, "verify", trace.toString(), "--expect", PROVIDER);
            boolean closed = Files.readString(trace, StandardCharsets.UTF_8).contains("conn_close");
            if ((verify.exit == 0 && closed) || System.nanoTime() > deadline) {
                assertEquals(0, verify.exit, verify::toString);
                assertTrue(closed, "no conn_close in " + trace);
                return verify;
            }
            Thread.sleep(200);
        }
    }

    /** What sora left in the server's JVM. */
    private record Leftovers(List<String> threads, long agentLoaders, long nativeLoaders, List<String> files) {
        boolean none() {
            return threads.isEmpty() && agentLoaders == 0 && nativeLoaders == 0 && files.isEmpty();
        }
    }

    /**
     * Looks until nothing is left (a detached connection's watcher ends within a poll after its close,
     * the listener threads as they close), at most {@code millis}; returns the last look.
     */
    private static Leftovers awaitNothingLeft(Path jdk, String pid, Path shm, long millis) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            // the histogram collects garbage first (a full GC, classes unloaded); threads after it, since a
            // cleaner ends only once what it watches was collected
            long agent = loaders(jdk, pid, AGENT_LOADER);
            long nat = loaders(jdk, pid, NATIVE_LOADER);
            Leftovers left = new Leftovers(soraThreads(jdk, pid), agent, nat, files(shm));
            if (left.none() || System.nanoTime() > deadline) {
                return left;
            }
            Thread.sleep(250);
        }
    }

    /** Live instances of {@code className} after the full GC that {@code jcmd GC.class_histogram} runs first. */
    static long loaders(Path jdk, String pid, String className) throws Exception {
        String histogram = jcmd(jdk, pid, "GC.class_histogram");
        Matcher m = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+" + Pattern.quote(className) + "(\\s|$)", Pattern.MULTILINE)
                .matcher(histogram);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Names of the live threads whose name starts with {@code sora-} ({@code jcmd Thread.print}). */
    static List<String> soraThreads(Path jdk, String pid) throws Exception {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("^\"(sora-[^\"]*)\"", Pattern.MULTILINE).matcher(jcmd(jdk, pid, "Thread.print"));
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** Every file and directory under {@code shm} except the private per-user directory itself. */
    static List<String> files(Path shm) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> all = Files.walk(shm)) {
            all.filter(p -> !p.equals(shm) && !(Files.isDirectory(p) && p.getParent().equals(shm)
                    && p.getFileName().toString().startsWith("sora-")))
                    .forEach(p -> out.add(shm.relativize(p).toString()));
        }
        return out;
    }

    private static String jcmd(Path jdk, String pid, String command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(jdk.resolve("bin/jcmd").toString(), pid, command);
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.redirectErrorStream(true);
        Path out = Files.createTempFile("jcmd", ".out");
        try {
            pb.redirectOutput(out.toFile());
            Process p = pb.start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("jcmd " + pid + " " + command + " timed out");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new AssertionError("jcmd " + pid + " " + command + " exited " + p.exitValue() + ":\n" + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
