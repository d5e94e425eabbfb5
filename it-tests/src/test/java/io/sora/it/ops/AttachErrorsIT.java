package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What the operator sees when a JVM cannot take sora, and that such a JVM is left alone. */
class AttachErrorsIT {

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(120)
    void aJvmThatForbidsAttachIsNamedAndNotSignalled(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of("-XX:+DisableAttachMechanism"), cp,
                "io.sora.it.ops.EchoServerApp", "" + port, "60")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            SoraCli attach = SoraCli.run(jdk, "attach", pid);
            assertEquals(1, attach.exit, attach::toString);
            assertTrue(attach.err.contains("JVM " + pid + " was started with -XX:+DisableAttachMechanism"), attach::toString);
            SoraCli status = SoraCli.run(jdk, "status", pid);
            assertEquals(1, status.exit, status::toString);
            assertTrue(server.process().isAlive());
            // an attach attempt would have sent SIGQUIT, and this JVM would have printed a thread dump
            assertTrue(server.stdout().stream().noneMatch(l -> l.startsWith("Full thread dump")), server::describe);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(120)
    void aJvmWithoutSoraSaysSo(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        String cp = ForkedJvm.testClasses().toString();
        try (ForkedJvm server = ForkedJvm.start(jdk, List.of(), cp, "io.sora.it.ops.EchoServerApp", "" + port, "60")) {
            server.awaitLine("READY", 60_000);
            String pid = Long.toString(server.process().pid());
            SoraCli status = SoraCli.run(jdk, "status", pid);
            assertEquals(1, status.exit, status::toString);
            assertEquals("sora status: sora is not attached to " + pid + "\n", status.err, status::toString);
            SoraCli detach = SoraCli.run(jdk, "detach", pid);
            assertEquals(1, detach.exit, detach::toString);
            assertTrue(detach.err.contains("sora is not attached to " + pid), detach::toString);
            SoraCli badConf = SoraCli.run(jdk, "attach", pid, "conf=/nonexistent/sora.conf");
            assertEquals(2, badConf.exit, badConf::toString);
            assertTrue(badConf.err.contains("conf file /nonexistent/sora.conf does not exist"), badConf::toString);
            assertTrue(server.stderr().isEmpty(), server::describe);
        }
    }
}
