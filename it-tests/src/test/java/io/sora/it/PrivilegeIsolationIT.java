package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent opens no door: an application that reaches for {@code jdk.internal.misc.Unsafe}, the
 * JDK-internal packages the agent itself uses, or (JDK 22+) a restricted method is refused, warned and
 * answered exactly as without the agent; with no rule, with shm rules in force, and with the RDMA probe
 * loading DiSNI's native library (a fake device directory makes it try).
 */
class PrivilegeIsolationIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void applicationIsRefusedExactlyAsWithoutTheAgent(Path jdk) throws Exception {
        Path conf = tmp.resolve("loop.conf");
        Files.writeString(conf, "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        Path sysfs = Files.createDirectories(tmp.resolve("infiniband/fake_rxe0"));

        Run plain = run(jdk, List.of());
        assertTrue(plain.out.contains("getUnsafe refused java.lang.IllegalAccessException"), plain.describe);
        assertTrue(plain.out.contains("jdk.internal.misc exported false open false"), plain.describe);
        if (plain.out.stream().anyMatch(l -> l.startsWith("native access "))) { // JDK 22+
            assertTrue(plain.out.contains("native access false"), plain.describe);
        }

        List<List<String>> withAgent = List.of(
                SamplePair.agent(),
                SamplePair.agent("conf=" + conf),
                withProperty(SamplePair.agent("conf=" + conf), "-Dsora.rdma.sysfs=" + sysfs.getParent()));
        for (List<String> args : withAgent) {
            Run agent = run(jdk, args);
            assertEquals(plain.out, agent.out, "stdout with " + args + "\n" + agent.describe);
            assertEquals(plain.err, agent.err, "stderr with " + args + "\n" + agent.describe);
        }
    }

    private static List<String> withProperty(List<String> args, String property) {
        List<String> out = new ArrayList<>(args);
        out.add(0, property);
        return out;
    }

    private record Run(List<String> out, List<String> err, String describe) {}

    private static Run run(Path jdk, List<String> jvmArgs) throws Exception {
        try (ForkedJvm app = ForkedJvm.start(jdk, jvmArgs, ForkedJvm.testClasses().toString(),
                "io.sora.it.apps.PrivilegeProbeApp")) {
            assertEquals(0, app.await(60_000), app.describe());
            // the JDK's warning names the caller, a hidden class whose address varies from run to run
            List<String> err = app.stderr().stream().map(l -> l.replaceAll("/0x[0-9a-f]+", "/0xADDR")).toList();
            return new Run(app.stdout(), err, app.describe());
        }
    }
}
