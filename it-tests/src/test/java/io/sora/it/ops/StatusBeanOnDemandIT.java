package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JVM started with {@code -javaagent} and a rule file creates no platform MBean server for sora: the
 * bean is registered when {@code status} (through the JDK's local management agent) first asks for that
 * server. The JVM's class-load log shows whether the server was created: the agent used to create it
 * 2 s after start-up, so the check is made once the target has run for longer than that. Then
 * {@code detach} leaves nothing of the agent behind (the class loader is collected).
 */
class StatusBeanOnDemandIT {
    /** The platform MBean server's factory: loaded when, and only when, a JMX server is created. */
    private static final String SERVER_CLASS = "javax.management.MBeanServerFactory ";
    /** The agent's patch that waits for that server. */
    private static final String PATCH_CLASS = "io.sora.agent.instrumentation.ManagementPatch ";
    /** When the agent used to register its bean (and so create the server), plus a margin. */
    private static final Duration OLD_DELAY = Duration.ofMillis(3_000);

    @TempDir
    Path tmp;

    /**
     * Without a rule file the agent starts 2 s after the JVM (it has nothing to do before), and that late
     * start waits for the server as any other: until 2026-11-29 it registered its bean at once, creating
     * the platform MBean server 2 s into the life of every JVM given the agent without rules.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(180)
    void withoutRulesTheLateStartCreatesNoServerEither(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path classes = tmp.resolve("class-load.log");
        List<String> jvmArgs = List.of("-javaagent:" + ForkedJvm.agentJar(), "-Xlog:class+load=info:file=" + classes);
        try (ForkedJvm server = ForkedJvm.start(jdk, jvmArgs, ForkedJvm.testClasses().toString(),
                "io.sora.it.ops.EchoServerApp", "" + port, "120")) {
            server.awaitLine("READY", 60_000);
            // the late start has published: either the patch that waits for the server, or the server
            String log = "";
            for (int i = 0; i < 400 && !log.contains(PATCH_CLASS) && !log.contains(SERVER_CLASS); i++) {
                Thread.sleep(50);
                log = Files.readString(classes);
            }
            assertTrue(log.contains(PATCH_CLASS) || log.contains(SERVER_CLASS), "the late start did not happen");
            assertFalse(log.contains(SERVER_CLASS), "the agent created the platform MBean server before anyone asked for it");

            SoraCli status = SoraCli.run(jdk, "status", Long.toString(server.process().pid()));
            assertEquals(0, status.exit, status::toString);
            assertTrue(status.out.contains("started with -javaagent"), status::toString);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(180)
    void theBeanIsRegisteredWhenStatusAsksNotAtStartUp(Path jdk) throws Exception {
        int port = HotAttachIT.freePort();
        Path conf = Files.writeString(tmp.resolve("server.conf"), "shm accept 127.0.0.1 " + port + " 127.0.0.1\n");
        Path classes = tmp.resolve("class-load.log");
        List<String> jvmArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + conf,
                "-Xlog:class+load=info:file=" + classes);
        try (ForkedJvm server = ForkedJvm.start(jdk, jvmArgs, ForkedJvm.testClasses().toString(),
                "io.sora.it.ops.EchoServerApp", "" + port, "120")) {
            server.awaitLine("READY", 60_000);
            Instant started = server.process().info().startInstant().orElseThrow();
            // a condition on the target's age, not a pause: until it is older than the old delay
            for (int i = 0; i < 200 && Duration.between(started, Instant.now()).compareTo(OLD_DELAY) < 0; i++) {
                Thread.sleep(50);
            }
            assertTrue(Duration.between(started, Instant.now()).compareTo(OLD_DELAY) >= 0);
            assertFalse(Files.readString(classes).contains(SERVER_CLASS),
                    "the agent created the platform MBean server before anyone asked for it");

            String pid = Long.toString(server.process().pid());
            SoraCli status = SoraCli.run(jdk, "status", pid);
            assertEquals(0, status.exit, status::toString);
            assertTrue(status.out.contains("started with -javaagent"), status::toString);
            assertTrue(status.out.contains("shm   available"), status::toString);
            assertTrue(Files.readString(classes).contains(SERVER_CLASS), "status created the server, as it should");
            // and a second tool finds the bean too (the server exists now; nothing asks the agent again)
            SoraCli again = SoraCli.run(jdk, "status", pid);
            assertEquals(0, again.exit, again::toString);

            // detach lets go of the agent: the hook the platform server calls holds nothing of it any more
            SoraCli detach = SoraCli.run(jdk, "detach", pid);
            assertEquals(0, detach.exit, detach::toString);
            long loaders = -1;
            for (int i = 0; i < 20 && loaders != 0; i++) {
                loaders = DetachReleasesEverythingIT.loaders(jdk, pid, "io.sora.agent.launcher.AgentClassLoader");
            }
            assertEquals(0, loaders, "the agent's class loader outlived the detach");
            SoraCli gone = SoraCli.run(jdk, "status", pid);
            assertEquals(1, gone.exit, gone::toString);
        }
    }
}
