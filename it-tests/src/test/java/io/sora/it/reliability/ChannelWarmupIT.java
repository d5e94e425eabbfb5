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
 * A JVM that uses socket channels on an shm rule warms them up in the background before its first
 * pairing (docs/shm.md, "Cold start"): a pair of loopback channels of its own, paired and driven
 * through a selector. That pair is the warm-up's alone: the application's channels pair as before, and
 * the trace shows theirs and no other. The application connects once the warm-up's thread has ended
 * (a warm-up still running when the application pairs stops driving its channels, so that it does
 * not compete with the application's start).
 */
class ChannelWarmupIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theWarmUpDrivesItsOwnChannelsAndTheTraceShowsOnlyTheApplications(Path jdk) throws Exception {
        Path trace = tmp.resolve("trace.jsonl");
        List<String> jvmArgs = new ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, trace));
        jvmArgs.add(0, "-Dsora.startup.timing=true");
        try (ForkedJvm j = ForkedJvm.start(jdk, jvmArgs, Reliability.cp(), Reliability.APPS + "ChannelFirst", "after-warmup")) {
            assertEquals(0, j.await(90_000), j.describe());
            assertEquals("ended", Reliability.require(j, "WARMUP"), j.describe());
            assertEquals("shm shm", Reliability.require(j, "PATH"), j.describe());
            List<String> warmup = j.stderr().stream().filter(l -> l.contains("background warm-up")).toList();
            assertEquals(1, warmup.size(), j.describe());
            assertTrue(warmup.get(0).matches(".*channels [0-9.]+ ms \\(3000 round trips\\).*"),
                    "the channel warm-up did not complete: " + warmup.get(0));
            List<String> paths = Reliability.pathEvents(trace);
            assertEquals(2, paths.size(), "path events: the application's two channels only: " + paths);
            assertTrue(paths.stream().allMatch(l -> l.contains("\"path\":\"shm\"")), paths.toString());
        }
    }
}
