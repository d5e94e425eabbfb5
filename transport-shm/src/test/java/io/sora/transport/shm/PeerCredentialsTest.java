package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sora.transport.NativeSockets;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same-user check of the rendezvous socket, both ways it is made: by user id through libsora (what
 * the agent uses) and by user name through the JDK's option (where the library cannot be used).
 */
class PeerCredentialsTest {
    @TempDir
    Path dir;

    @Test
    void sameUserPassesBothWaysAndTheNativeWayIsTheOneUsed() throws IOException {
        Path sock = dir.resolve("s.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(sock));
                 SocketChannel accepted = server.accept()) {
                // this module's tests run as the agent does (libsora, sun.nio.ch exported): by uid
                assertTrue(NativeSockets.fd(accepted) >= 0, "the native check is not in use");
                assertEquals(NativeSockets.effectiveUid(), NativeSockets.peerUid(NativeSockets.fd(accepted)));
                assertDoesNotThrow(() -> PeerCredentials.requireSameUser(accepted, "pairing client"));
                assertDoesNotThrow(() -> PeerCredentials.requireSameUser(client, "shm listener"));
                assertDoesNotThrow(() -> PeerCredentials.requireSameUserByName(accepted, "pairing client"));
                assertDoesNotThrow(() -> PeerCredentials.requireSameUserByName(client, "shm listener"));
            }
        }
    }

    /**
     * A process of another user (nobody, 65534) connects: both ways refuse it, naming it. Needs root (to
     * run that process) and setpriv and python3 from the system; skipped otherwise. (Through sora's
     * private directory, mode 0700, another user cannot even connect: this proves the second lock.)
     */
    @Test
    void anotherUsersProcessIsRefusedBothWays() throws Exception {
        assumeTrue(NativeSockets.effectiveUid() == 0, "needs root to run a process as another user");
        Path setpriv = Path.of("/usr/bin/setpriv");
        Path python = Path.of("/usr/bin/python3");
        assumeTrue(Files.isExecutable(setpriv) && Files.isExecutable(python), "needs /usr/bin/setpriv and /usr/bin/python3");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path sock = dir.resolve("s.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            Files.setPosixFilePermissions(sock, PosixFilePermissions.fromString("rw-rw-rw-"));
            // connects, then waits for the server to close (bounded: 30 s at most)
            Process other = new ProcessBuilder(setpriv.toString(), "--reuid=65534", "--regid=65534", "--clear-groups",
                    python.toString(), "-c",
                    "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.settimeout(30)\ns.connect(sys.argv[1])\n"
                            + "try:\n  s.recv(1)\nexcept Exception:\n  pass\n",
                    sock.toString()).redirectErrorStream(true).start();
            try (SocketChannel accepted = acceptWithin(server, other)) {
                IOException byUid = assertThrows(IOException.class,
                        () -> PeerCredentials.requireSameUser(accepted, "pairing client"));
                // the native check refuses; its message names the users, as the JDK's way does
                assertTrue(byUid.getMessage().startsWith("pairing client runs as user "), byUid.getMessage());
                assertTrue(byUid.getMessage().endsWith(", not root"), byUid.getMessage());
                IOException byName = assertThrows(IOException.class,
                        () -> PeerCredentials.requireSameUserByName(accepted, "pairing client"));
                assertTrue(byName.getMessage().startsWith("pairing client runs as user "), byName.getMessage());
                assertTrue(byName.getMessage().endsWith(", not root"), byName.getMessage());
            } finally {
                assertTrue(other.waitFor(30, TimeUnit.SECONDS), "the other user's process did not end");
            }
        }
    }

    /** The connection of {@code other}, waiting at most 30 s and no longer than it lives. */
    private static SocketChannel acceptWithin(ServerSocketChannel server, Process other) throws Exception {
        server.configureBlocking(false);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (;;) {
            SocketChannel ch = server.accept();
            if (ch != null) return ch;
            if (!other.isAlive()) {
                throw new AssertionError("the other user's process ended without connecting: "
                        + new String(other.getInputStream().readAllBytes()));
            }
            if (System.nanoTime() > deadline) throw new AssertionError("the other user's process did not connect in 30 s");
            other.waitFor(5, TimeUnit.MILLISECONDS);
        }
    }
}
