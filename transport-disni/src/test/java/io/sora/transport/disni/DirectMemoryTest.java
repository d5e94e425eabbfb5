package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A ring the JVM's direct memory cannot hold is an IOException naming it (the pairing then falls back to
 * TCP with that reason), not an OutOfMemoryError: the shadow ring is as large as the server asks (up to 256
 * MiB), and the error went through the pairing into the application's connect() (found in review,
 * 2026-11-28). Run in a child JVM whose direct memory is 1 MiB.
 */
class DirectMemoryTest {
    /** Child: asks for an 8 MiB ring and prints what it got. */
    public static void main(String[] args) {
        try {
            RdmaMedium.direct(8 << 20, "send shadow ring");
            System.out.println("ALLOCATED");
        } catch (IOException e) {
            System.out.println("IOEXCEPTION " + e.getMessage());
        } catch (Throwable t) {
            System.out.println("THROWN " + t);
        }
    }

    @Test
    void aRingTheDirectMemoryCannotHoldIsAnIoException() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-XX:MaxDirectMemorySize=1m", "-cp", System.getProperty("java.class.path"),
                DirectMemoryTest.class.getName()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child ended");
        List<String> out = List.of(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n"));
        assertEquals(0, p.exitValue(), String.join("\n", out));
        String last = out.get(out.size() - 1);
        assertTrue(last.startsWith("IOEXCEPTION no direct memory for the send shadow ring of 8388608 bytes"), String.join("\n", out));
    }
}
