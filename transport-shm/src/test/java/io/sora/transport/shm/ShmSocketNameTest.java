package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rendezvous socket's name carries the network namespace (see {@link ShmDirectory#socketPath}). */
class ShmSocketNameTest {
    @TempDir
    Path tmp;

    @Test
    void theNamespaceIsTheNumberInTheLink() throws Exception {
        assertEquals("4026531840", ShmDirectory.namespace(Files.createSymbolicLink(tmp.resolve("a"), Path.of("net:[4026531840]")), "net"));
        assertEquals("", ShmDirectory.namespace(Files.createSymbolicLink(tmp.resolve("b"), Path.of("mnt:[4026531840]")), "net"));
        assertEquals("", ShmDirectory.namespace(Files.createSymbolicLink(tmp.resolve("c"), Path.of("net:[]")), "net"));
        assertEquals("", ShmDirectory.namespace(Files.createSymbolicLink(tmp.resolve("d"), Path.of("net:[12x]")), "net"));
        assertEquals("", ShmDirectory.namespace(tmp.resolve("missing"), "net"));
        assertEquals("", ShmDirectory.namespace(Files.createFile(tmp.resolve("not-a-link")), "net"));
    }

    @Test
    void aDirectoryTooLongForItsSocketsMakesShmUnavailableWithTheReason() throws Exception {
        Path fits = Files.createDirectory(tmp.resolve("ok"));
        assertTrue(new ShmTransport(ShmSettings.forDirectory(fits), io.sora.trace.Tracer.OFF).initialize());
        Path tooLong = Files.createDirectory(tmp.resolve("d".repeat(120)));
        ShmTransport t = new ShmTransport(ShmSettings.forDirectory(tooLong), io.sora.trace.Tracer.OFF);
        assertFalse(t.initialize());
        String why = t.availability().unavailabilityCause().map(Throwable::getMessage).orElse("");
        assertTrue(why.contains("is too long for its rendezvous sockets") && why.contains("a Unix-domain socket at most 107")
                && why.contains("set a shorter -Dsora.shm.dir"), why);
    }

    @Test
    void thisProcessesSocketsAreNamedForItsNamespace() throws Exception {
        String link = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        String ns = link.substring(link.indexOf('[') + 1, link.indexOf(']'));
        assertEquals(ns, ShmDirectory.NETNS);
        assertEquals("port-8080.net" + ns + ".sock", ShmDirectory.socketName(8080));
        assertTrue(ShmDirectory.socketName(8080).length() < 40, "short: a Unix socket path has 107 bytes in all");
    }
}
