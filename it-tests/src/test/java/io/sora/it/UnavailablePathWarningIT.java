package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Rules that ask for a fast path this machine cannot give: exactly one warning at start-up naming the
 * cause and saying those connections use TCP, and the application runs exactly as without the agent.
 */
class UnavailablePathWarningIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void oneWarningNamingTheCauseThenTcp(Path jdk) throws Exception {
        String[] devices = new File("/sys/class/infiniband").list();
        Assumptions.assumeTrue(devices == null || devices.length == 0, "this machine has an RDMA device");
        Path conf = tmp.resolve("client.conf");
        Files.writeString(conf, "rdma connect 127.0.0.1 65444\n");
        SamplePair run = SamplePair.run(jdk, List.of(), SamplePair.agent("conf=" + conf), 20, 512);
        assertEquals(0, run.clientExit, run.describe());
        List<String> err = run.client.stderr();
        assertEquals(1, err.size(), run.describe());
        assertTrue(err.get(0).startsWith("[sora] WARN rdma unavailable (no RDMA device"), err.get(0));
        assertTrue(err.get(0).contains("connections matching rdma rules use TCP"), err.get(0));
    }
}
