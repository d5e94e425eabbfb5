package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * File descriptors (docs/reliability.md, "File descriptors"): a paired connection holds one more on
 * each side, so an application near its limit must not run out because of sora, and a listener that
 * meets the limit must not stop pairing for good.
 */
class DescriptorLimitIT {
    @TempDir
    Path tmp;

    /**
     * Both JVMs limited to 256 descriptors, 150 connections open at once, all echoing: without the
     * agent that fits (about 190 descriptors a side); with one more per paired connection it did not
     * ("Too many open files" in the server's accept after about 110). Every connection must work; sora
     * pairs while the process uses less than half of its limit, the rest stay on TCP with the reason.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void anApplicationNearItsDescriptorLimitNeverRunsOutBecauseOfSora(Path jdk) throws Exception {
        int port = Reliability.freePort();
        int connections = 150;
        Path server = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=5s");
        Path client = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=5s");
        Path clientTrace = tmp.resolve("client.trace");
        try (ForkedJvm s = ForkedJvm.startWithFileLimit(256, jdk, Reliability.agent(server, tmp, null), Reliability.cp(),
                Reliability.APPS + "EchoServer", "" + port, "" + connections)) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.startWithFileLimit(256, jdk, Reliability.agent(client, tmp, clientTrace),
                    Reliability.cp(), Reliability.APPS + "ManyClients", "" + port, "" + connections, "65536")) {
                assertEquals(0, c.await(300_000), c.describe());
                assertEquals(0, s.await(60_000), s.describe());
                String done = Reliability.require(c, "DONE");
                String served = Reliability.require(s, "SERVED");
                System.out.println("DescriptorLimitIT " + Reliability.jdkName(jdk) + ": " + done + "; " + served);
                Matcher m = Pattern.compile("ok=(\\d+) shm=(\\d+) failed=(\\d+)").matcher(done);
                assertTrue(m.find(), done);
                assertEquals(connections, Integer.parseInt(m.group(1)), "every connection echoed: " + c.describe());
                assertEquals(0, Integer.parseInt(m.group(3)), c.describe());
                int shm = Integer.parseInt(m.group(2));
                assertTrue(shm > 0 && shm < connections, "some paired, the rest on TCP: shm=" + shm);
                assertEquals("shm=" + shm + " tcp=" + (connections - shm) + " failed=0", served, s.describe());
                List<String> tcp = Reliability.pathEvents(clientTrace).stream().filter(l -> l.contains("\"path\":\"tcp\"")).toList();
                assertEquals(connections - shm, tcp.size(), "a path event per TCP connection");
                assertTrue(tcp.stream().allMatch(l -> l.contains("file descriptors: ") && l.contains(" of 256 (RLIMIT_NOFILE) in use")),
                        "each says why: " + tcp.get(0));
            }
        }
    }

    /**
     * The server runs out of descriptors (its application opens files until none is left) while a
     * client connects: the listener's accept fails. It must pause and go on (it ended, and no later
     * connection of that server socket paired), so the connection after the files are closed pairs.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aListenerThatRanOutOfDescriptorsPairsAgainAfterwards(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path server = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=3s");
        Path client = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=3s");
        Path go = tmp.resolve("go");
        try (ForkedJvm s = ForkedJvm.startWithFileLimit(256, jdk, Reliability.agent(server, tmp, null), Reliability.cp(),
                Reliability.APPS + "FdExhaustServer", "" + port, "1000")) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.start(jdk, Reliability.agent(client, tmp, null), Reliability.cp(),
                    Reliability.APPS + "ThreeConnects", "" + port, go.toString())) {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (Reliability.value(s, "EXHAUSTED").isEmpty()) {
                    assertTrue(System.nanoTime() < deadline && s.isAlive(), "no EXHAUSTED line: " + s.describe());
                    Thread.sleep(5); // polls the server's output
                }
                Files.createFile(go);
                assertEquals(0, c.await(120_000), c.describe());
                assertEquals(0, s.await(60_000), s.describe());
                String clientPaths = Reliability.require(c, "PATHS");
                String serverPaths = Reliability.require(s, "PATHS");
                System.out.println("DescriptorLimitIT " + Reliability.jdkName(jdk) + ": client " + clientPaths
                        + ", server " + serverPaths + ", " + Reliability.require(s, "EXHAUSTED"));
                assertEquals(clientPaths, serverPaths, "both ends agree on every connection's path");
                assertTrue(clientPaths.startsWith("shm "), clientPaths);
                assertTrue(clientPaths.endsWith(" shm"), "the connection after the files were closed pairs: " + clientPaths);
            }
        }
    }
}
