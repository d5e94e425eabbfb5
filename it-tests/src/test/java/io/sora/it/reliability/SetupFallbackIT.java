package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * When the fast path cannot be set up, the connection goes on over TCP with no error the application
 * can see (the fallback matrix's EchoPeer checks every byte), and the trace's NET.462 event says
 * {@code path=tcp} with the reason: an shm directory that cannot be used, a rendezvous that never
 * answers, a client outside the accept rule's list.
 */
class SetupFallbackIT {
    @TempDir
    Path tmp;

    /** Directories that cannot hold sora's private directory, as -Dsora.shm.dir. */
    static Stream<Arguments> unusableDirs() {
        List<Arguments> out = new ArrayList<>();
        List<Path> jdks = ForkedJvm.jdks();
        for (String kind : List.of("missing", "regular-file", "read-only-fs", "private-dir-wrong-mode", "private-dir-symlink")) {
            out.add(Arguments.of(jdks.get(jdks.size() - 1), kind));
        }
        for (Path jdk : jdks.subList(0, jdks.size() - 1)) {
            out.add(Arguments.of(jdk, "missing")); // the other JDKs: one case each
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("unusableDirs")
    void anUnusableShmDirectoryMeansTcpWithTheReasonTraced(Path jdk, String kind) throws Exception {
        Path dir = unusable(kind);
        int port = Reliability.freePort();
        Path st = tmp.resolve("server.trace");
        Path ct = tmp.resolve("client.trace");
        String[] paths = echo(jdk, port, Reliability.agent(serverConf(port, "127.0.0.1"), dir, st),
                Reliability.agent(clientConf(port, 2000), dir, ct));
        assertEquals("tcp tcp", paths[0] + " " + paths[1]);
        assertTcpBecause(ct, "shm unavailable: shm transport unavailable in ");
        // The server names the cause once, at start-up (JSOR.61 initshm, rc -1).
        List<String> initshm = Files.readAllLines(st).stream().filter(l -> l.contains("\"hook\":\"initshm\"") && l.contains("\"rc\":-1")).toList();
        assertEquals(1, initshm.size(), "server trace: " + Files.readAllLines(st));
        System.out.println("SetupFallbackIT server: " + initshm.get(0).replaceAll(".*\"rc\"", "\"rc\""));
    }

    /** The server's accepted connection gets its path event too (docs/trace.md: every connection the agent looks at). */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("unusableDirs")
    void anUnusableShmDirectoryIsTracedOnTheServerSideToo(Path jdk, String kind) throws Exception {
        Path dir = unusable(kind);
        int port = Reliability.freePort();
        Path st = tmp.resolve("server.trace");
        echo(jdk, port, Reliability.agent(serverConf(port, "127.0.0.1"), dir, st),
                Reliability.agent(clientConf(port, 2000), dir, tmp.resolve("client.trace")));
        assertTcpBecause(st, "shm unavailable");
    }

    private Path unusable(String kind) throws IOException {
        String user = System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_");
        switch (kind) {
            case "missing":
                return tmp.resolve("no-such-dir");
            case "regular-file":
                return Files.writeString(tmp.resolve("a-file"), "x");
            case "read-only-fs":
                return Path.of("/proc"); // not writable even by root
            case "private-dir-wrong-mode": {
                Path d = Files.createDirectories(tmp.resolve("wrong-mode"));
                Path mine = Files.createDirectory(d.resolve("sora-" + user));
                Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rwxr-xr-x"));
                return d;
            }
            default: {
                Path d = Files.createDirectories(tmp.resolve("symlink"));
                Path elsewhere = Files.createDirectory(tmp.resolve("elsewhere"));
                Files.setPosixFilePermissions(elsewhere, PosixFilePermissions.fromString("rwx------"));
                Files.createSymbolicLink(d.resolve("sora-" + user), elsewhere);
                return d;
            }
        }
    }

    /** A rendezvous socket that accepts HELLO and never answers, in front of a server without sora. */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aRendezvousThatNeverAnswersMeansTcpAfterTheRulesWait(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path priv = privateDirectory();
        Path ct = tmp.resolve("client.trace");
        List<SocketChannel> held = new ArrayList<>();
        try (ServerSocketChannel mute = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            mute.bind(UnixDomainSocketAddress.of(Reliability.rendezvousSocket(priv, port)));
            CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
                try {
                    held.add(mute.accept()); // read nothing, answer nothing, keep it open
                } catch (IOException e) {
                    // closed at the end of the test
                }
            });
            String[] paths = echo(jdk, port, List.of(), Reliability.agent(clientConf(port, 300), tmp, ct));
            assertEquals("tcp tcp", paths[0] + " " + paths[1]);
            assertTcpBecause(ct, "no pairing reply within 300 ms");
            acceptor.join();
            assertEquals(1, held.size(), "the client must have knocked at the rendezvous");
        } finally {
            for (SocketChannel ch : held) ch.close();
        }
    }

    /**
     * A server whose shm listener cannot start (its rendezvous socket is taken: here by a stand-in that
     * never answers) serves its connections on TCP, and each one's reason says why the listener is not
     * running, not only that it is not (status and verify show a path's reason; the listen failure was
     * only in the trace's listen event).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aServerWhoseListenerCouldNotStartSaysWhyInEachReason(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path priv = privateDirectory();
        Path sock = Reliability.rendezvousSocket(priv, port);
        Path st = tmp.resolve("server.trace");
        List<SocketChannel> held = new ArrayList<>();
        try (ServerSocketChannel taken = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            taken.bind(UnixDomainSocketAddress.of(sock));
            CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
                try {
                    for (;;) held.add(taken.accept()); // the server's liveness probe, then the client's knock
                } catch (IOException e) {
                    // closed at the end of the test
                }
            });
            String[] paths = echo(jdk, port, Reliability.agent(serverConf(port, "127.0.0.1"), tmp, st),
                    Reliability.agent(clientConf(port, 300), tmp, null));
            assertEquals("tcp tcp", paths[0] + " " + paths[1]);
            assertTcpBecause(st, "shm listener not running for /127.0.0.1:" + port + ": it failed to start: another sora shm listener is live at " + sock);
            taken.close();
            acceptor.join();
        } finally {
            for (SocketChannel ch : held) ch.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aClientOutsideTheAcceptListGetsTcp(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path st = tmp.resolve("server.trace");
        Path ct = tmp.resolve("client.trace");
        String[] paths = echo(jdk, port, Reliability.agent(serverConf(port, "10.9.9.9 192.168.0.0/16"), tmp, st),
                Reliability.agent(clientConf(port, 2000), tmp, ct));
        assertEquals("tcp tcp", paths[0] + " " + paths[1]);
        assertTcpBecause(st, "client 127.0.0.1 not in the accept rule's client list");
        assertTcpBecause(ct, "client 127.0.0.1 not in the accept rule's client list");
    }

    /** The agent's private directory under the test's {@code -Dsora.shm.dir} ({@code sora-<user>}, 0700), made ahead of it. */
    private Path privateDirectory() throws IOException {
        return Files.createDirectory(tmp.resolve("sora-" + System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_")),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }

    private Path serverConf(int port, String clients) throws IOException {
        return Reliability.conf(tmp, "server.conf", "shm accept 127.0.0.1 " + port + " " + clients + " wait=2s");
    }

    private Path clientConf(int port, int waitMillis) throws IOException {
        return Reliability.conf(tmp, "client.conf", "shm connect 127.0.0.1 " + port + " wait=" + waitMillis + "ms");
    }

    /** Runs the fallback matrix's EchoPeer pair (every byte checked); returns the two paths. */
    private static String[] echo(Path jdk, int port, List<String> serverArgs, List<String> clientArgs) throws Exception {
        String main = "io.sora.it.apps.EchoPeer";
        try (ForkedJvm s = ForkedJvm.start(jdk, serverArgs, Reliability.cp(), main, "server", "" + port, "client")) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.start(jdk, clientArgs, Reliability.cp(), main, "client", "" + port, "client")) {
                assertEquals(0, c.await(60_000), c.describe());
                assertEquals(0, s.await(60_000), s.describe());
                assertTrue(s.stdout().contains("OK") && c.stdout().contains("OK"), s.describe() + c.describe());
                return new String[] {Reliability.require(s, "PATH"), Reliability.require(c, "PATH")};
            }
        }
    }

    private static void assertTcpBecause(Path trace, String reason) throws IOException {
        List<String> events = Reliability.pathEvents(trace);
        assertEquals(1, events.size(), "one NET.462 path event expected in " + trace + ": " + events);
        String e = events.get(0);
        assertTrue(e.contains("\"path\":\"tcp\"") && e.contains("\"reason\":\"" + reason), "expected path tcp, reason '" + reason + "...': " + e);
        System.out.println("SetupFallbackIT: " + e.replaceAll(".*\"path\"", "\"path\""));
    }
}
