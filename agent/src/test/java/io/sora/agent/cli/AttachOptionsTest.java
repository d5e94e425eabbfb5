package io.sora.agent.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AttachOptionsTest {
    @TempDir
    Path dir;

    @Test
    void relativePathsAreResolvedHereNotInTheTarget() throws Exception {
        Files.writeString(dir.resolve("server.conf"), "shm accept 127.0.0.1 5000\n");
        String resolved = AttachCommand.resolveOptions("conf=server.conf,trace=iprint=NET+iprint=JSOR,trace.file=out/%p.trace", dir);
        assertEquals("conf=" + dir.resolve("server.conf") + ",trace=iprint=NET+iprint=JSOR,trace.file=" + dir.resolve("out/%p.trace"),
                resolved);
    }

    @Test
    void aMissingConfFileIsAUsageError() {
        CliException e = assertThrows(CliException.class, () -> AttachCommand.resolveOptions("conf=nope.conf", dir));
        assertEquals(CliException.USAGE, e.exitCode());
        assertEquals("conf file " + dir.resolve("nope.conf") + " does not exist", e.getMessage());
    }

    @Test
    void anUnknownOptionIsRejectedBeforeAnythingIsAttached() {
        CliException e = assertThrows(CliException.class, () -> AttachCommand.resolveOptions("cnof=x", dir));
        assertEquals(CliException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("unknown agent option 'cnof'"), e.getMessage());
    }

    /** A mistake in the trace option is named before anything is attached (the agent would run without its trace). */
    @Test
    void aMistakeInTheTraceOptionIsAUsageErrorNamingIt() {
        CliException e = assertThrows(CliException.class, () -> AttachCommand.resolveOptions("trace=iprint=NTE", dir));
        assertEquals(CliException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("trace option 'iprint=NTE'"), e.getMessage());
    }

    @Test
    void noOptionsStayEmpty() throws Exception {
        assertEquals("", AttachCommand.resolveOptions("", dir));
    }
}
