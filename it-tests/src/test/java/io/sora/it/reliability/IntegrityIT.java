package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Data integrity over shm through the real agent, in two JVMs: each side sends
 * {@code -Dsora.reliability.bytes} (128 MiB by default, 1 GiB in {@code -Psoak}) in writes of random
 * sizes while it receives as much, both directions at once; the SHA-256 of what one side sent equals
 * the SHA-256 of what the other received. Server and client run on different JDKs when two are
 * installed (17 to 25 and 25 to 17).
 */
class IntegrityIT {
    static final long BYTES = Long.getLong("sora.reliability.bytes", 128L << 20);

    @TempDir
    Path tmp;

    static Stream<Arguments> jdkPairs() {
        List<Path> jdks = ForkedJvm.jdks();
        List<Arguments> out = new ArrayList<>();
        for (int i = 0; i < jdks.size(); i++) {
            out.add(Arguments.of(jdks.get(i), jdks.get((i + 1) % jdks.size())));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "server {0} client {1}")
    @MethodSource("jdkPairs")
    void randomSizedWritesBothWaysAtOnceArriveIntact(Path serverJdk, Path clientJdk) throws Exception {
        int port = Reliability.freePort();
        Path server = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s");
        Path client = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=2s");
        long limit = 120_000 + BYTES / 5_000; // a hang guard: 5 MB/s is far below what shm does here
        String main = Reliability.APPS + "TransferPeer";
        try (ForkedJvm s = ForkedJvm.start(serverJdk, Reliability.agent(server, tmp, null), Reliability.cp(), main,
                "server", "" + port, "" + BYTES, "11")) {
            s.awaitLine("READY", 60_000);
            long t0 = System.nanoTime();
            try (ForkedJvm c = ForkedJvm.start(clientJdk, Reliability.agent(client, tmp, null), Reliability.cp(), main,
                    "client", "" + port, "" + BYTES, "22")) {
                assertEquals(0, c.await(limit), c.describe());
                assertEquals(0, s.await(limit), s.describe());
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertEquals("shm", Reliability.require(s, "PATH"), s.describe());
                assertEquals("shm", Reliability.require(c, "PATH"), c.describe());
                assertEquals(Reliability.require(c, "SENT"), Reliability.require(s, "RECEIVED"), "client to server");
                assertEquals(Reliability.require(s, "SENT"), Reliability.require(c, "RECEIVED"), "server to client");
                System.out.printf("IntegrityIT: %d MiB each way, server %s, client %s: %d ms including JVM start (%.0f MiB/s each way)%n",
                        BYTES >> 20, Reliability.jdkName(serverJdk), Reliability.jdkName(clientJdk), ms,
                        (BYTES / 1048576.0) / (ms / 1000.0));
            }
        }
    }
}
