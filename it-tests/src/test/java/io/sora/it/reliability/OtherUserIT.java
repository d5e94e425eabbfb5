package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local user other than the server's cannot join its shm connections. Needs root (to create the
 * user {@value #USER} with useradd and run a JVM as it with runuser); skipped otherwise.
 *
 * <ol>
 *   <li>Through the directory: the other user cannot even connect to the rendezvous socket (0700
 *       directory).</li>
 *   <li>Through the uid check: with the directory and socket opened up by hand (a misconfiguration
 *       sora would refuse to create), the listener still answers NO because SO_PEERCRED names another
 *       user.</li>
 *   <li>With the agent on both ends, sharing the parent directory: each user has a private directory,
 *       so the client finds no listener and both ends stay on TCP, with every byte intact.</li>
 * </ol>
 */
class OtherUserIT {
    static final String USER = "sora-rt";

    @TempDir
    static Path tmp;
    static Path classes;

    @BeforeAll
    static void otherUser() throws Exception {
        assumeTrue(SegmentPrivacyIT.isRoot(), "needs root to create a second user and run a JVM as it");
        if (run(List.of("id", "-u", USER)) != 0) {
            assumeTrue(run(List.of("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER)) == 0,
                    "useradd " + USER + " failed");
        }
        // a world-writable test directory (like /dev/shm, less the sticky bit), and world-readable copies of the apps the other user runs (the build tree may not be readable to it)
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        classes = tmp.resolve("classes");
        Files.createDirectories(classes.resolve("io/sora/it/reliability/apps"));
        Path src = ForkedJvm.testClasses().resolve("io/sora/it/reliability/apps");
        for (String c : List.of("RawHello.class")) {
            Files.copy(src.resolve(c), classes.resolve("io/sora/it/reliability/apps/" + c), StandardCopyOption.REPLACE_EXISTING);
        }
        Files.createDirectories(classes.resolve("io/sora/it/apps"));
        // EchoPeer and its nested classes (EchoPeer$...), which a run may load
        try (var peer = Files.newDirectoryStream(ForkedJvm.testClasses().resolve("io/sora/it/apps"), "EchoPeer*.class")) {
            for (Path f : peer) {
                Files.copy(f, classes.resolve("io/sora/it/apps/" + f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        try (var walk = Files.walk(classes)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
    }

    private static int run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "hung: " + cmd);
        return p.exitValue();
    }

    /** A JVM as the other user: ForkedJvm starts a "java" that is runuser -u sora-rt -- <real java>. */
    private static ForkedJvm asOtherUser(List<String> jvmArgs, String main, String... args) throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("as-" + USER + "/bin"));
        Path java = bin.resolve("java");
        Files.writeString(java, "#!/bin/sh\nexec /usr/sbin/runuser -u " + USER + " -- " + javaOf() + " \"$@\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return ForkedJvm.start(bin.getParent(), jvmArgs, classes.toString(), main, args);
    }

    private static Path javaOf() {
        List<Path> jdks = ForkedJvm.jdks();
        return jdks.get(jdks.size() - 1).resolve("bin/java");
    }

    @Test
    void anotherUsersProcessCannotReachOrPassTheListener() throws Exception {
        int port = Reliability.freePort();
        Path shm = Files.createDirectories(tmp.resolve("shm"));
        Files.setPosixFilePermissions(shm, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path conf = Reliability.conf(tmp, "server.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s");
        Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rw-r--r--"));
        try (ForkedJvm server = ForkedJvm.start(ForkedJvm.jdks().get(0), Reliability.agent(conf, shm, null),
                Reliability.cp(), "io.sora.it.apps.EchoPeer", "server", "" + port, "client")) {
            server.awaitLine("READY", 60_000);
            Path priv = shm.resolve("sora-root");
            Path sock = Reliability.rendezvousSocket(priv, port);
            assertTrue(Files.exists(sock), "the server's rendezvous socket " + sock);

            String reply = rawHello(sock, port);
            System.out.println("OtherUserIT through the 0700 directory: " + reply);
            assertTrue(reply.startsWith("CONNECT_FAILED") && reply.contains("Permission denied"), reply);

            Files.setPosixFilePermissions(priv, PosixFilePermissions.fromString("rwx--x--x"));
            Files.setPosixFilePermissions(sock, PosixFilePermissions.fromString("rw-rw-rw-"));
            try {
                reply = rawHello(sock, port);
            } finally {
                Files.setPosixFilePermissions(priv, PosixFilePermissions.fromString("rwx------"));
                Files.setPosixFilePermissions(sock, PosixFilePermissions.fromString("rw-------"));
            }
            System.out.println("OtherUserIT with the directory opened by hand: " + reply);
            assertEquals("NO pairing check failed: pairing client runs as user " + USER + ", not root", reply);

            Path clientConf = Reliability.conf(tmp, "client.conf", "shm connect 127.0.0.1 " + port + " wait=2s");
            Files.setPosixFilePermissions(clientConf, PosixFilePermissions.fromString("rw-r--r--"));
            try (ForkedJvm client = asOtherUser(List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf,
                    "-Dsora.shm.dir=" + shm), "io.sora.it.apps.EchoPeer", "client", "" + port, "client")) {
                assertEquals(0, client.await(60_000), client.describe());
                assertEquals(0, server.await(60_000), server.describe());
                assertEquals("tcp", Reliability.require(client, "PATH"), client.describe());
                assertEquals("tcp", Reliability.require(server, "PATH"), server.describe());
                assertTrue(client.stdout().contains("OK") && server.stdout().contains("OK"));
                assertTrue(Files.isDirectory(shm.resolve("sora-" + USER)), "the other user's own private directory");
            }
        }
    }

    private static String rawHello(Path sock, int port) throws Exception {
        try (ForkedJvm j = asOtherUser(List.of(), Reliability.APPS + "RawHello", sock.toString(), "40000", "" + port)) {
            assertEquals(0, j.await(60_000), j.describe());
            return Reliability.value(j, "REPLY").orElseGet(() -> "CONNECT_FAILED " + Reliability.require(j, "CONNECT_FAILED"));
        }
    }
}
