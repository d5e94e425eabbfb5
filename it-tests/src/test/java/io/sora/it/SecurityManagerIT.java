package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JVM started with a security manager ({@code -Djava.security.manager}, JDK 17 to 23) and the agent:
 * the application runs, and the agent says on stderr that it stays off and why. Before 2026-11-24 the
 * launcher's first look at the system properties threw {@code AccessControlException} out of
 * {@code premain}, and the JVM exited at once ("FATAL ERROR in native method: processing of -javaagent
 * failed"): the application never started. Since JDK 24 no JVM starts with that option at all, with or
 * without the agent, so the test is skipped there.
 */
class SecurityManagerIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void theApplicationStartsAndTheAgentSaysItStaysOff(Path jdk) throws Exception {
        int feature = ForkedJvm.featureVersion(jdk);
        Assumptions.assumeTrue(feature < 24, "JDK " + feature + " refuses -Djava.security.manager by itself");
        Path conf = tmp.resolve("client.conf");
        Files.writeString(conf, "shm connect 127.0.0.1 65431\n");
        try (ForkedJvm app = ForkedJvm.start(jdk,
                List.of("-Djava.security.manager", "-javaagent:" + ForkedJvm.agentJar(), "-Dsora.conf=" + conf),
                ForkedJvm.examplesJar().toString(), "io.sora.examples.bench.Hello")) {
            assertEquals(0, app.await(60_000), app.describe());
            assertEquals(List.of("hello"), app.stdout(), app.describe());
            String err = String.join("\n", app.stderr());
            assertTrue(err.contains("[sora] not started: a security manager is installed (-Djava.security.manager)"), err);
            assertFalse(err.contains("FATAL") || err.contains("Exception"), err);
        }
    }
}
