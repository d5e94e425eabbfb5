package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs {@link VerbsSmoke} in this JVM over a real RDMA device. Skipped where there is none
 * ({@code /dev/infiniband/uverbs0} missing): it runs for real inside the Soft-RoCE VM
 * ({@code tools/rxe-vm}), where {@code RXE_IP} names the device's address.
 */
class DisniNativeVmIT {

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void verbsRoundTripOverTheDevice() throws IOException {
        assumeTrue(Files.exists(Path.of("/dev/infiniband/uverbs0")), "no RDMA device (/dev/infiniband/uverbs0)");
        String ip = System.getenv().getOrDefault("RXE_IP", "192.168.77.1");
        List<String> passed = VerbsSmoke.run(
                new InetSocketAddress(InetAddress.getByName(ip), VerbsSmoke.DEFAULT_PORT + 1), System.out);
        assertEquals(11, passed.size(), "checks passed: " + passed);
        assertTrue(passed.stream().anyMatch(s -> s.startsWith("RDMA WRITE WITH IMM of 4096 bytes")), passed::toString);
        assertTrue(passed.stream().anyMatch(s -> s.startsWith("RDMA READ of 4096 bytes in a chain of 32")), passed::toString);
    }
}
