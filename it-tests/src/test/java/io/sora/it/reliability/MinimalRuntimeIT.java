package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A runtime image made with {@code jlink} of {@code java.base} and {@code java.instrument} only (no
 * {@code java.management}, no {@code jdk.unsupported}): the agent serves its rules there, streams and
 * channels on shm, and says once that status, attach and detach cannot reach the JVM. Until 2026-11-29
 * its start linked JMX's exception types and it did not start at all ("agent failed to start ...
 * NoClassDefFoundError: javax/management/JMException"), every connection on TCP.
 */
class MinimalRuntimeIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theAgentServesInAnImageWithoutJavaManagement(Path jdk) throws Exception {
        Path image = tmp.resolve("image");
        Process jlink = new ProcessBuilder(jdk.resolve("bin/jlink").toString(), "--add-modules", "java.base,java.instrument",
                "--output", image.toString()).redirectErrorStream(true).start();
        String out = new String(jlink.getInputStream().readAllBytes());
        assertTrue(jlink.waitFor(120, TimeUnit.SECONDS), "jlink did not end");
        assertEquals(0, jlink.exitValue(), out);

        List<String> args = Reliability.agent(Reliability.loopbackConf(tmp), tmp, null);
        try (ForkedJvm j = ForkedJvm.start(image, args, Reliability.cp(), Reliability.APPS + "ClientChannelFirst")) {
            assertEquals(0, j.await(60_000), j.describe());
            assertEquals("shm shm", Reliability.require(j, "PATH"), j.describe());
            assertEquals("shm shm", Reliability.require(j, "STREAMPATH"), j.describe());
            assertTrue(j.stderr().stream().noneMatch(l -> l.contains("ERROR")), j.describe());
            assertEquals(1, j.stderr().stream().filter(l -> l.contains("no java.management module")).count(), j.describe());
        }
    }
}
