package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An attach of the agent jar from another path after a detach loads that jar: the JVM loads the
 * launcher class through the system class loader, which keeps the copy of the first attach, and that
 * copy took its own jar's path. With the first jar deleted (an upgrade that replaced the directory) the
 * second attach failed, naming the deleted jar (found in review, 2026-11-29).
 */
class ReattachFromAnotherPathIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(300)
    void aSecondAttachFromAnotherPathLoadsThatJar(Path jdk) throws Exception {
        Path first = Files.copy(ForkedJvm.agentJar(), Files.createDirectory(tmp.resolve("first")).resolve("sora-agent.jar"));
        Path second = Files.copy(ForkedJvm.agentJar(), Files.createDirectory(tmp.resolve("second")).resolve("sora-agent.jar"));
        int port = HotAttachIT.freePort();
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.EchoServerApp", "" + port, "120")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            SoraCli attach = SoraCli.runJar(jdk, first, "attach", pid);
            assertEquals(0, attach.exit, attach::toString);
            SoraCli detach = SoraCli.runJar(jdk, first, "detach", pid);
            assertEquals(0, detach.exit, detach::toString);
            Files.delete(first);
            SoraCli again = SoraCli.runJar(jdk, second, "attach", pid);
            assertEquals(0, again.exit, again + "\n" + server.describe());
            assertTrue(again.out.startsWith("sora attached to " + pid), again::toString);
            assertEquals(0, SoraCli.runJar(jdk, second, "detach", pid).exit);
        }
    }
}
