package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent's shm transport uses libsora's calls on descriptors (the pairing's same-user check by uid, its
 * poll for the reply, the accepting thread's own COMMIT read) on every JDK: its start-up trace says so
 * ({@code initshm}, rc 0, "libsora loaded, descriptor calls on"). Until 2026-11-24 on JDK 22+ they were off:
 * {@code sun.nio.ch} was exported to DiSNI's module of the agent's layer but not to the transport core's,
 * and each pairing fell back to the JDK's slower ways (the server read {@code /etc/passwd} once per
 * connection: 311 times for 300 connections under strace, 9 after).
 */
class NativeCallsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theShmTransportUsesItsNativeDescriptorCalls(Path jdk) throws Exception {
        Path trace = tmp.resolve("trace.json");
        Path file = Files.writeString(tmp.resolve("app.properties"), "answer=42\n");
        try (ForkedJvm j = ForkedJvm.start(jdk, Reliability.agent(Reliability.loopbackConf(tmp), tmp, trace), Reliability.cp(),
                Reliability.APPS + "FileFirst", file.toString())) {
            assertEquals(0, j.await(60_000), j.describe());
            assertEquals("shm shm", Reliability.require(j, "PATH"), j.describe());
        }
        List<String> init = Files.readAllLines(trace).stream()
                .filter(l -> l.contains("\"hook\":\"initshm\"") && l.contains("\"rc\":")).toList();
        assertEquals(1, init.size(), "initshm exit lines: " + init);
        assertTrue(init.get(0).contains("\"rc\":0") && init.get(0).contains("libsora loaded, descriptor calls on")
                && init.get(0).contains("doorbells in an epoll set of sora's own"), init.get(0));
    }
}
