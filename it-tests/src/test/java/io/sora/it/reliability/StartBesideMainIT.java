package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * With a rule file and no trace the agent starts on its own thread ({@code sora-start}) while the
 * application's {@code main} runs; a socket the application opens before the agent is up waits for it
 * (docs/troubleshooting.md, "Start-up"), so even the first connection of {@code main} pairs. The
 * application here binds and connects as the first thing it does. With
 * {@code -Dsora.startup.background=false} the agent starts before {@code main}, as it always did.
 */
class StartBesideMainIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theFirstSocketsOfMainPairWhileTheAgentStartsBesideIt(Path jdk) throws Exception {
        assertStartedOn(jdk, "sora-start", List.of());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void switchedOffTheAgentStartsBeforeMain(Path jdk) throws Exception {
        assertStartedOn(jdk, "main", List.of("-Dsora.startup.background=false"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theFirstChannelsOfMainPairWhileTheAgentStartsBesideIt(Path jdk) throws Exception {
        assertStartedOn(jdk, "sora-start", List.of(), "ChannelFirst");
    }

    /**
     * A file read and an address resolved before the first sockets (as most applications begin): on JDK 25
     * that loads {@code sun.nio.ch.SocketChannelImpl} (see {@code FileFirst}), and until 2026-11-24 main
     * then waited the gate's 10 s for an agent start stuck behind that very class load, and its sockets
     * stayed on TCP ("the agent did not start within 10000 ms").
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aFileReadBeforeTheFirstSocketsHoldsNothingAndEverySocketPairs(Path jdk) throws Exception {
        Path file = java.nio.file.Files.writeString(tmp.resolve("app.properties"), "answer=42\n");
        assertStartedOn(jdk, "sora-start", List.of(), "FileFirst", file.toString());
    }

    /**
     * A client socket channel opened as {@code main}'s very first act (no file read or address resolved
     * before it): on JDK 22+ the agent's start, reading its rules and the JDK's security properties, needs
     * the class that load makes ({@code sun.nio.ch.SocketChannelImpl}), and until 2026-11-29 the start gate
     * held that load until the start was done: main waited 10 s, and its channels stayed on TCP.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aClientChannelOpenedFirstWaitsOnlyForTheStartAndPairs(Path jdk) throws Exception {
        assertStartedOn(jdk, "sora-start", List.of(), "ClientChannelFirst");
    }

    /**
     * A start that does not finish within the gate's wait costs the application one wait, whatever number
     * of gated classes (a socket channel's provider, a server socket, a socket) it loads meanwhile: here
     * the wait is 1 ms, which a start never makes, and the warning comes once (before 2026-11-29: once per
     * class, each after its own wait).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aStartThatOutlastsTheGatesWaitIsWaitedForOnce(Path jdk) throws Exception {
        List<String> jvmArgs = new ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, null));
        jvmArgs.add(0, "-Dsora.startup.gateWait=1");
        try (ForkedJvm j = ForkedJvm.start(jdk, jvmArgs, Reliability.cp(), Reliability.APPS + "ClientChannelFirst")) {
            assertEquals(0, j.await(60_000), j.describe());
            assertEquals(1, j.stderr().stream().filter(l -> l.contains("did not start within 1 ms")).count(), j.describe());
        }
    }

    /**
     * A program of streams only pays nothing for channels: sora's own Unix-domain rendezvous accepting
     * its client's announcement once checked the channel patch (every planned class patched again,
     * {@code FileChannelImpl} retransformed, the selector's internals looked up: 20-40 ms of a cold JVM,
     * on the path of its first pairing).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aProgramOfStreamsNeverChecksTheChannelPatch(Path jdk) throws Exception {
        Path log = tmp.resolve("classes.log");
        assertStartedOn(jdk, "sora-start", List.of("-Xlog:class+load=info:file=" + log));
        List<String> loads = java.nio.file.Files.readAllLines(log);
        assertTrue(loads.stream().anyMatch(l -> l.contains("io.sora.transport.shm.RendezvousListener ")), "the rendezvous ran");
        assertTrue(loads.stream().noneMatch(l -> l.contains("sun.nio.ch.FileChannelImpl source: __VM_RedefineClasses__")),
                "FileChannelImpl retransformed: the channel patch was checked");
    }

    private void assertStartedOn(Path jdk, String thread, List<String> extra) throws Exception {
        assertStartedOn(jdk, thread, extra, "SameJvmChecks", "maps", tmp.toString());
    }

    private void assertStartedOn(Path jdk, String thread, List<String> extra, String app, String... args) throws Exception {
        List<String> jvmArgs = new ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, null));
        jvmArgs.add(0, "-Dsora.startup.timing=true");
        jvmArgs.addAll(0, extra);
        try (ForkedJvm j = ForkedJvm.start(jdk, jvmArgs, Reliability.cp(), Reliability.APPS + app, args)) {
            assertEquals(0, j.await(60_000), j.describe());
            assertEquals("shm shm", Reliability.require(j, "PATH"), j.describe());
            if (app.equals("FileFirst")) assertEquals("shm shm", Reliability.require(j, "CHANNELPATH"), j.describe());
            if (app.equals("ClientChannelFirst")) assertEquals("shm shm", Reliability.require(j, "STREAMPATH"), j.describe());
            List<String> timing = j.stderr().stream().filter(l -> l.contains("agent total")).toList();
            assertEquals(1, timing.size(), j.describe());
            assertTrue(timing.get(0).endsWith("on thread " + thread), timing.get(0));
            // the agent's classes come from its class pack (one file), not from its twelve jars
            assertTrue(j.stderr().stream().anyMatch(l -> l.contains("class loader") && l.contains("(classes from its pack)")), j.describe());
            assertTrue(j.stderr().stream().noneMatch(l -> l.contains("did not start within")), j.describe());
        }
    }
}
