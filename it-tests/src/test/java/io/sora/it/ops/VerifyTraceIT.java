package io.sora.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code verify} on traces of real runs of the JSOR samples: one all on shm, one that fell back. */
class VerifyTraceIT {
    @TempDir
    Path tmp;

    @Test
    @Timeout(180)
    void passesOnAnShmRunAndNamesTheConnectionThatFellBack() throws Exception {
        Path jdk = ForkedJvm.jdks().get(ForkedJvm.jdks().size() - 1);
        Path paired = run(jdk, true, "paired");
        SoraCli ok = SoraCli.run(jdk, "verify", paired.toString(), "--expect", "shm");
        assertEquals(0, ok.exit, ok::toString);
        assertTrue(ok.out.contains("OK: all 1 connection took shm"), ok::toString);
        assertTrue(ok.out.contains("sent=40960 received=40960"), ok::toString);

        Path fellBack = run(jdk, false, "fellback");
        SoraCli fail = SoraCli.run(jdk, "verify", fellBack.toString(), "--expect", "shm");
        assertEquals(1, fail.exit, fail::toString);
        assertTrue(fail.err.matches("(?s).*FAIL .*: conn \\d+ \\(local=/127.0.0.1:\\d+ remote=/127.0.0.1:\\d+\\) took tcp,"
                + " expected shm: no sora listener at .*"), fail::toString);
    }

    /** SampleServer and SampleClient, 10 x 4 KiB; the server has the agent only when {@code serverAgent}. */
    private Path run(Path jdk, boolean serverAgent, String name) throws Exception {
        int port = HotAttachIT.freePort();
        Path serverConf = Files.writeString(tmp.resolve(name + "-server.conf"), "shm accept 127.0.0.1 " + port + " wait=2s\n");
        Path clientConf = Files.writeString(tmp.resolve(name + "-client.conf"), "shm connect 127.0.0.1 " + port + " wait=2s\n");
        Path trace = tmp.resolve(name + "-client.trace");
        String cp = ForkedJvm.examplesJar().toString();
        String[] args = {"127.0.0.1", "" + port, "10", "4096"};
        List<String> serverArgs = new ArrayList<>();
        if (serverAgent) {
            serverArgs.add("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + serverConf);
        }
        try (ForkedJvm server = ForkedJvm.start(jdk, serverArgs, cp, "io.sora.examples.SampleServer", args)) {
            server.awaitLine("Server Ready>", 60_000);
            List<String> clientArgs = List.of("-javaagent:" + ForkedJvm.agentJar() + "=conf=" + clientConf
                    + ",trace=iprint=NET,trace.file=" + trace);
            try (ForkedJvm client = ForkedJvm.start(jdk, clientArgs, cp, "io.sora.examples.SampleClient", args)) {
                assertEquals(0, client.await(60_000), client::describe);
                assertEquals(0, server.await(60_000), server::describe);
            }
        }
        return trace;
    }
}
