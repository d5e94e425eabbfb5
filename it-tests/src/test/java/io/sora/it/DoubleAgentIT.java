package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent given twice ({@code -javaagent} on the command line and again in {@code JAVA_TOOL_OPTIONS},
 * say) starts once: the second copy, in a class loader of its own, says so and does nothing. Before, both
 * started (the check looked only at its own class's state and at a delegate not yet installed): both
 * patched the socket classes and listened on the same ports (found in review, 2026-11-29).
 */
class DoubleAgentIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aSecondCopyOfTheAgentSaysSoAndDoesNothing(Path jdk) throws Exception {
        Path conf = Files.writeString(tmp.resolve("loop.conf"), "shm accept 127.0.0.1 * 127.0.0.1 wait=2s\nshm connect 127.0.0.1 * wait=2s\n");
        String agent = "-javaagent:" + ForkedJvm.agentJar() + "=conf=" + conf;
        // no trace: with one, each copy starts before main, one after the other, and the second saw the first;
        // without, both start beside main at once
        try (ForkedJvm app = ForkedJvm.start(jdk, List.of(agent, agent), ForkedJvm.testClasses().toString(),
                "io.sora.it.apps.PrivilegeProbeApp")) {
            assertEquals(0, app.await(60_000), app.describe());
            assertTrue(app.stdout().contains("read 42"), app.describe());
            assertEquals(1, app.stderr().stream().filter(l -> l.contains("agent already running in this JVM")).count(),
                    app.describe());
            assertTrue(app.stderr().stream().noneMatch(l -> l.contains("ERROR")), app.describe());
        }
    }
}
