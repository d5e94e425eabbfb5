package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The peer closes while this side is parked in a read (it reads EOF) or in a write waiting for
 * credits (it gets "Broken pipe"), on the server end and on the client end, through the agent on shm.
 * "Parked" is checked, so the close really hits a sleeping thread.
 */
class BlockedPeerCloseIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void aBlockedReadOrWriteReturnsWhenThePeerCloses(Path jdk) throws Exception {
        try (ForkedJvm j = ForkedJvm.start(jdk, Reliability.agent(Reliability.loopbackConf(tmp), tmp, null),
                Reliability.cp(), Reliability.APPS + "SameJvmChecks", "blocked")) {
            assertEquals(0, j.await(120_000), j.describe());
            for (String who : List.of("server", "client")) {
                assertEquals("true", Reliability.require(j, "PARKED_READ_" + who), j.describe());
                assertEquals("-1", Reliability.require(j, "READ_AFTER_PEER_CLOSE_" + who), j.describe());
                assertEquals("true", Reliability.require(j, "PARKED_WRITE_" + who), j.describe());
                assertEquals("SocketException: Broken pipe", Reliability.require(j, "WRITE_AFTER_PEER_CLOSE_" + who), j.describe());
            }
            assertEquals(List.of("PATH shm shm"), j.stdout().stream().filter(l -> l.startsWith("PATH")).distinct().toList());
        }
    }
}
