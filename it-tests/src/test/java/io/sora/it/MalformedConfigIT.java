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
}
