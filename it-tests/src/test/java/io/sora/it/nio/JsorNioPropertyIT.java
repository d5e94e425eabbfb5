package io.sora.it.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * JSOR's property for NIO channels, {@code -Dcom.ibm.nio.rdma.conf=FILE}, configures the agent as JSOR's
 * users set it: alone, its file's rules pair channels; beside {@code -Dcom.ibm.net.rdma.conf} naming
 * another file, both files are read (each a {@code config_loaded} event) and their rules together decide.
 */
class JsorNioPropertyIT {
    private static final String APP = "io.sora.it.apps.ChannelPeer";

    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void theNioPropertyAloneConfiguresChannels(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        ForkedPair p = ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(),
                jsor(null, "shm accept 127.0.0.1 * wait=2s", serverTrace, "s"),
                jsor(null, "shm connect 127.0.0.1 * wait=2s", clientTrace, "c"), ForkedPair.ANY_LINE);
        assertTrue(p.server.stdout().contains("PATH shm"), p.describe());
        assertTrue(p.client.stdout().contains("PATH shm"), p.describe());
        for (Path t : List.of(serverTrace, clientTrace)) {
            assertEquals(List.of("shm"), ForkedPair.paths(t).stream().map(e -> e.path()).collect(Collectors.toList()), t.toString());
            assertEquals(1, configLoaded(t).size(), t + ": " + configLoaded(t));
        }
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void withTheSocketsPropertyNamingAnotherFileBothAreRead(Path jdk) throws Exception {
        Path serverTrace = tmp.resolve("server.json");
        Path clientTrace = tmp.resolve("client.json");
        // the sockets' files name a port nobody uses: the channels' connection is paired by the NIO files' rules
        ForkedPair p = ForkedPair.run(jdk, APP, ForkedJvm.testClasses().toString(),
                jsor("shm accept 127.0.0.1 1", "shm accept 127.0.0.1 * wait=2s", serverTrace, "s"),
                jsor("shm connect 127.0.0.1 1", "shm connect 127.0.0.1 * wait=2s", clientTrace, "c"), ForkedPair.ANY_LINE);
        assertTrue(p.server.stdout().contains("PATH shm"), p.describe());
        assertTrue(p.client.stdout().contains("PATH shm"), p.describe());
        for (Path t : List.of(serverTrace, clientTrace)) {
            List<String> loaded = configLoaded(t);
            assertEquals(2, loaded.size(), t + ": " + loaded);
            assertTrue(loaded.get(0).contains("-net.conf: 1 rules") && loaded.get(1).contains("-nio.conf: 1 rules"), loaded.toString());
            String reason = ForkedPair.paths(t).get(0).reason();
            assertTrue(reason.contains("-nio.conf:1"), "the NIO file's rule paired it: " + reason);
        }
    }

    /** The JVM options of a JSOR command line: the sockets' file (if any) and the channels' file. */
    private List<String> jsor(String netRule, String nioRule, Path trace, String side) throws Exception {
        List<String> args = new ArrayList<>(List.of("-javaagent:" + ForkedJvm.agentJar(), "-Dsora.nio.pairingWaitMillis=2000",
                "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + trace));
        if (netRule != null) {
            args.add("-Dcom.ibm.net.rdma.conf=" + Files.writeString(tmp.resolve(side + "-net.conf"), netRule + "\n"));
        }
        args.add("-Dcom.ibm.nio.rdma.conf=" + Files.writeString(tmp.resolve(side + "-nio.conf"), nioRule + "\n"));
        return args;
    }

    private static List<String> configLoaded(Path trace) throws Exception {
        return io.sora.trace.TraceReader.read(trace).events().stream().filter(e -> e.hook().equals("config_loaded"))
                .map(e -> e.detail()).collect(Collectors.toList());
    }
}
