package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class ShmLeftoversTest {
    @TempDir
    Path tmp;

    @Test
    void staleRendezvousSocketsAndDeadSegmentsGoLiveOnesStay() throws Exception {
        ShmTransport t = new ShmTransport(ShmSettings.forDirectory(tmp), Tracer.OFF);
        assertTrue(t.initialize());
        Path dir = t.directory();
        Path stale = dir.resolve("port-1.sock"); // the name before network namespaces were in it: swept too
        try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            gone.bind(UnixDomainSocketAddress.of(stale)); // closing leaves the file behind, as a killed JVM does
        }
        Path live = dir.resolve(ShmDirectory.socketName(2)); // named for this network namespace, as listeners are
        Process dead = new ProcessBuilder("true").start();
        assertTrue(dead.waitFor(10, java.util.concurrent.TimeUnit.SECONDS));
        Path deadSegment = Files.createFile(dir.resolve("seg-" + dead.pid() + "-00ff")); // a name without the namespace
        Path deadHere = Files.createFile(dir.resolve("spare-" + dead.pid() + "." + ShmDirectory.PIDNS + "-00fe"));
        // a process of another PID namespace (another container sharing the directory): its pid means
        // nothing here, whether or not this namespace has a process with that number
        Path elsewhere = Files.createFile(dir.resolve("spare-" + dead.pid() + ".1-00fd"));
        Path elsewhereLive = Files.createFile(dir.resolve("seg-" + ProcessHandle.current().pid() + ".1-00fc"));
        // names that are not sora's leftovers, whatever their pid or socket: never touched
        Path notOurs = Files.createFile(dir.resolve("segment-" + dead.pid() + "-00fb"));
        Path notARendezvous = dir.resolve("port-3.sock.old");
        try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            gone.bind(UnixDomainSocketAddress.of(notARendezvous));
        }
        try (ServerSocketChannel listening = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listening.bind(UnixDomainSocketAddress.of(live));
            assertTrue(Files.exists(stale));
            assertEquals(3, t.removeLeftovers());
            assertFalse(Files.exists(stale), "nobody listens there");
            assertFalse(Files.exists(deadSegment), "its process is gone");
            assertFalse(Files.exists(deadHere), "its process is gone, in this PID namespace");
            assertTrue(Files.exists(elsewhere), "another PID namespace's file is not judged by its pid");
            assertTrue(Files.exists(elsewhereLive), "nor one whose pid happens to be alive here");
            assertTrue(Files.exists(live), "a live listener keeps its socket");
            assertTrue(Files.exists(notOurs), "not a segment's name");
            assertTrue(Files.exists(notARendezvous), "not a rendezvous socket's name");
            assertEquals(0, t.removeLeftovers());
        }
    }
}
