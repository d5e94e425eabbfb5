package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * 200 connections from one client JVM to one server JVM, both with the agent and shm rules, all
 * open at once and all echoing 1 MiB at the same time; every byte of every echo is checked.
 */
class ManyConnectionsIT {
    static final int CONNECTIONS = Integer.getInteger("sora.reliability.connections", 200);
    static final int BYTES = 1 << 20;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void twoHundredConcurrentEchoesAreAllCorrect(Path jdk) throws Exception {
        int port = Reliability.freePort();
        Path server = Reliability.conf(tmp, "s.conf", "shm accept 127.0.0.1 " + port + " 127.0.0.1 wait=5s");
        Path client = Reliability.conf(tmp, "c.conf", "shm connect 127.0.0.1 " + port + " wait=5s");
        try (ForkedJvm s = ForkedJvm.start(jdk, Reliability.agent(server, tmp, null), Reliability.cp(),
                Reliability.APPS + "EchoServer", "" + port, "" + CONNECTIONS)) {
            s.awaitLine("READY", 60_000);
            try (ForkedJvm c = ForkedJvm.start(jdk, Reliability.agent(client, tmp, null), Reliability.cp(),
                    Reliability.APPS + "ManyClients", "" + port, "" + CONNECTIONS, "" + BYTES)) {
                assertEquals(0, c.await(300_000), c.describe());
                assertEquals(0, s.await(60_000), s.describe());
                String done = Reliability.require(c, "DONE");
                System.out.println("ManyConnectionsIT " + Reliability.jdkName(jdk) + ": " + done + "; connecting took "
                        + Reliability.require(c, "CONNECTED"));
                assertEquals("ok=" + CONNECTIONS + " shm=" + CONNECTIONS + " failed=0 all_returned=true",
                        done.replaceAll(" ms=\\d+", ""), c.describe());
                assertEquals("shm=" + CONNECTIONS + " tcp=0 failed=0", Reliability.require(s, "SERVED"), s.describe());
            }
        }
    }
}
