package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kill -9 of one JVM in the middle of a transfer in both directions over shm (its reader and writer
 * threads busy, the survivor's writer often parked for credits): the survivor's reader and writer
 * both return, with EOF or an IOException, and no thread stays stuck. The time from the kill to the
 * later of the two returns is printed; the assertion is only a hang guard (10 s).
 */
class PeerKillIT {
    @TempDir
    Path tmp;

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Path jdk : ForkedJvm.jdks()) {
            out.add(Arguments.of(jdk, "client"));
            out.add(Arguments.of(jdk, "server"));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} kill the {1}")
    @MethodSource("cases")
    void theSurvivorSeesTheEndPromptlyAndNoThreadIsStuck(Path jdk, String victim) throws Exception {
        int port = Reliability.freePort();
        Path sc = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=2s");
        Path cc = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=2s");
        String main = Reliability.APPS + "KillPeer";
        try (ForkedJvm s = ForkedJvm.start(jdk, Reliability.agent(sc, tmp, null), Reliability.cp(), main,
                "server", "" + port, victim.equals("server") ? "victim" : "survivor")) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.start(jdk, Reliability.agent(cc, tmp, null), Reliability.cp(), main,
                    "client", "" + port, victim.equals("client") ? "victim" : "survivor")) {
                ForkedJvm dead = victim.equals("server") ? s : c;
                ForkedJvm survivor = victim.equals("server") ? c : s;
                awaitPrefix(s, "STREAMING");
                awaitPrefix(c, "STREAMING");
                long killedAt = System.currentTimeMillis();
                dead.process().destroyForcibly(); // SIGKILL on Linux
                assertTrue(dead.process().waitFor(10, TimeUnit.SECONDS), "the victim did not die");
                assertEquals(0, survivor.await(60_000), survivor.describe());
                assertEquals("shm", Reliability.require(survivor, "PATH"), survivor.describe());
                assertTrue(survivor.stdout().contains("THREADS_ENDED"), survivor.describe());
                String reader = Reliability.require(survivor, "READER_END");
                String writer = Reliability.require(survivor, "WRITER_END");
                long ended = Math.max(Long.parseLong(reader.split(" ")[0]), Long.parseLong(writer.split(" ")[0]));
                long ms = ended - killedAt;
                System.out.printf("PeerKillIT %s, %s killed: survivor's reader and writer returned %d ms after SIGKILL (reader: %s; writer: %s)%n",
                        Reliability.jdkName(jdk), victim, ms, reader.substring(reader.indexOf(' ') + 1),
                        writer.substring(writer.indexOf(' ') + 1));
                assertTrue(ms < 10_000, "the survivor took " + ms + " ms to see its peer die");
                assertTrue(reader.contains("EOF") || reader.contains("Exception"), reader);
                assertTrue(writer.contains("Exception"), writer);
            }
        }
    }

    private static void awaitPrefix(ForkedJvm j, String prefix) throws InterruptedException {
        for (int i = 0; i < 6000; i++) {
            if (j.stdout().stream().anyMatch(l -> l.startsWith(prefix))) return;
            if (!j.process().isAlive()) break;
            Thread.sleep(5);
        }
        throw new AssertionError("no '" + prefix + "' from " + j.describe());
    }
}
