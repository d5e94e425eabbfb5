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
 * A JVM whose direct memory is too small for sora ({@code -XX:MaxDirectMemorySize} of 64-104 KiB, where
 * the agent's start, its listener, its warm-up or the warm-up's echo thread meet the limit, depending on
 * the JDK): the application's bytes arrive whatever path they take, and the agent's background warm-up
 * ends, and no thread of sora's dies of it. Until 2026-11-29 a warm-up echo thread that could not allocate
 * its buffer died without closing its end, and the warm-up thread waited on it until the JVM's exit (with
 * the echo's stack trace on stderr); and a listener whose read of a client's HELLO met the limit ended,
 * every later connection of its server on TCP.
 */
class TightDirectMemoryIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void theBytesArriveAndTheWarmUpEndsWhateverTheLimit(Path jdk) throws Exception {
        for (int kib = 64; kib <= 112; kib += 4) {
            List<String> args = new ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, null));
            args.add(0, "-XX:MaxDirectMemorySize=" + kib + "k");
            try (ForkedJvm j = ForkedJvm.start(jdk, args, Reliability.cp(), Reliability.APPS + "PairThenWarmup")) {
                assertEquals(0, j.await(90_000), kib + " KiB: " + j.describe());
                assertEquals("7", Reliability.require(j, "READ"), kib + " KiB: " + j.describe());
                assertTrue(!Reliability.require(j, "WARMUP").equals("running"), kib + " KiB: " + j.describe());
                assertTrue(j.stderr().stream().noneMatch(l -> l.startsWith("Exception in thread \"sora-")),
                        kib + " KiB: " + j.describe());
            }
        }
    }
}
