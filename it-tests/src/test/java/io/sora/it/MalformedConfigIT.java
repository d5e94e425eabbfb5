package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A malformed rule file: the agent prints file:line:column and the application carries on over TCP. */
class MalformedConfigIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void malformedRuleIsReportedAndTheRunGoesOnOverTcp(Path jdk) throws Exception {
        Path conf = tmp.resolve("server.conf");
        Files.writeString(conf, "# JSOR-style server rules\nshm accept 127.0.0.1 65444\nrdma   accept 127.0.0.1 65a\n");
        SamplePair run = SamplePair.run(jdk, List.of("-Dcom.ibm.net.rdma.conf=" + conf),
                List.of(), 50, 1024);
        // the server was started without the agent: this run is the reference
        assertEquals(0, run.serverExit, run.describe());
        SamplePair bad = SamplePair.run(jdk, SamplePair.agent("conf=" + conf), List.of(), 50, 1024);
        assertEquals(0, bad.serverExit, bad.describe());
        assertEquals(0, bad.clientExit, bad.describe());
        assertEquals(SamplePair.normalized(run.server.stdout()), SamplePair.normalized(bad.server.stdout()));
        String err = String.join("\n", bad.server.stderr());
        assertTrue(err.contains(conf + ":3:25: port '65a' is not a number"), err);
        assertTrue(err.contains("all connections use TCP"), err);
    }

    /**
     * An empty winning setting ({@code conf=}) is an error on stderr and, as a file's errors are, a
     * {@code config_error} event in the NET trace (before 2026-11-29 the trace had none: only
     * {@code initialize0(rc=-1)}).
     */
    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void anEmptySettingIsAConfigErrorInTheTrace(Path jdk) throws Exception {
        Path trace = tmp.resolve("trace.jsonl");
        List<String> args = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=", "-Dsora.trace=iprint=NET",
                "-Dsora.trace.file=" + trace, "-Dsora.shm.dir=" + tmp);
        try (ForkedJvm j = ForkedJvm.start(jdk, args, ForkedJvm.testClasses().toString(),
                "io.sora.it.reliability.apps.PairThenWarmup")) {
            assertEquals(0, j.await(60_000), j.describe());
            assertTrue(j.stderr().stream().anyMatch(l -> l.contains("ERROR") && l.contains("conf=")), j.describe());
        }
        List<String> events = Files.readAllLines(trace);
        assertTrue(events.stream().anyMatch(l -> l.contains("\"hook\":\"config_error\"") && l.contains("conf=")),
                String.join("\n", events));
    }
}
