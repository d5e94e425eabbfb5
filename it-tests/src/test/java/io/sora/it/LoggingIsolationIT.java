package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An application with its own, different SLF4J (1.7) and Logback (1.2) logs exactly as it did without
 * the agent, even with the agent's own Logback busy writing a trace and a shm rule active.
 */
class LoggingIsolationIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void applicationLogsExactlyAsWithoutTheAgent(Path jdk) throws Exception {
        Path libs = Path.of(System.getProperty("sora.app.libs"));
        String cp;
        try (Stream<Path> jars = Files.list(libs)) {
            cp = Stream.concat(Stream.of(ForkedJvm.testClasses().resolve("app-logging"), ForkedJvm.testClasses()),
                    jars.sorted()).map(Path::toString).collect(Collectors.joining(File.pathSeparator));
        }
        Path conf = tmp.resolve("loop.conf");
        Files.writeString(conf, "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        List<String> plain = run(jdk, List.of(), cp);
        List<String> withAgent = run(jdk, SamplePair.agent("conf=" + conf,
                "trace=iprint=mt+iprint=NET+iprint=JSOR", "trace.file=" + tmp.resolve("t.json")), cp);
        assertEquals(List.of(
                "APP-LOGBACK INFO LoggingApp - starting with ch.qos.logback.classic.LoggerContext",
                "APP-LOGBACK DEBUG LoggingApp - server read 42",
                "APP-LOGBACK WARN LoggingApp - done"), plain);
        assertEquals(plain, withAgent);
        assertTrue(Files.size(tmp.resolve("t.json")) > 0, "the agent's own Logback wrote the trace");
    }

    private static List<String> run(Path jdk, List<String> jvmArgs, String cp) throws Exception {
        try (ForkedJvm app = ForkedJvm.start(jdk, jvmArgs, cp, "io.sora.it.apps.LoggingApp")) {
            assertEquals(0, app.await(60_000), app.describe());
            assertEquals(List.of(), app.stderr(), app.describe());
            return app.stdout();
        }
    }
}
