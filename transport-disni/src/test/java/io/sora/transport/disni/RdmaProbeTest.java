package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.Availability;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RdmaProbeTest {
    @TempDir
    Path tmp;

    private Path limits(String memlock) throws IOException {
        return Files.writeString(tmp.resolve("limits"), "Limit                     Soft Limit           Hard Limit           Units\n"
                + "Max open files            1024                 4096                 files\n"
                + "Max locked memory         " + memlock + "            bytes\n");
    }

    private Path status(String capEff) throws IOException {
        return Files.writeString(tmp.resolve("status"), "Name:\tjava\nCapEff:\t" + capEff + "\n");
    }

    @Test
    void readsTheSoftMemlockLimit() throws IOException {
        assertEquals(65536, RdmaProbe.memlockSoftLimit(limits("65536                8388608")));
        assertEquals(Long.MAX_VALUE, RdmaProbe.memlockSoftLimit(limits("unlimited            unlimited")));
        assertEquals(-1, RdmaProbe.memlockSoftLimit(tmp.resolve("missing")));
    }

    @Test
    void aSmallLimitWithoutCapIpcLockIsTheCause() throws IOException {
        Path l = limits("65536                65536");
        IOException e = assertThrows(IOException.class, () -> RdmaProbe.checkMemlock(l, status("0000000000000000"), 262144));
        assertTrue(e.getMessage().contains("65536 bytes") && e.getMessage().contains("262144"), e.getMessage());
        assertDoesNotThrow(() -> RdmaProbe.checkMemlock(l, status("0000000000004000"), 262144), "CAP_IPC_LOCK (bit 14) lifts the limit");
        assertDoesNotThrow(() -> RdmaProbe.checkMemlock(limits("unlimited unlimited"), status("0"), 262144));
        assertTrue(RdmaProbe.hasCapability(status("000001ffffffffff"), 14));
        assertFalse(RdmaProbe.hasCapability(status("0000000000000000"), 14));
    }

    @Test
    void theKillSwitchMakesItUnavailableAndConnectFallsBack() {
        String old = System.getProperty(DisniTransport.DISABLED_PROPERTY);
        System.setProperty(DisniTransport.DISABLED_PROPERTY, "true");
        try {
            DisniTransport t = DisniTransport.create(Tracer.OFF);
            Availability a = t.availability();
            assertFalse(a.isAvailable());
            assertTrue(a.unavailabilityCause().orElseThrow().getMessage().contains("sora.rdma.disabled"));
            ConnectionKey key = new ConnectionKey(new InetSocketAddress("127.0.0.1", 5000), new InetSocketAddress("127.0.0.1", 6000));
            PairingResult r = t.connect(key, PairingOptions.DEFAULT, new SocketHooks() {
                @Override
                public int soTimeoutMillis() {
                    return 0;
                }

                @Override
                public void closeSocket() {
                }
            });
            assertTrue(r instanceof PairingResult.Fallback f && f.reason().contains("sora.rdma.disabled"), r.toString());
            assertThrows(IOException.class, () -> t.listen(new InetSocketAddress("127.0.0.1", 6000), k -> null));
        } finally {
            if (old == null) System.clearProperty(DisniTransport.DISABLED_PROPERTY);
            else System.setProperty(DisniTransport.DISABLED_PROPERTY, old);
        }
    }

    @Test
    void withoutADeviceTheCauseSaysSo() {
        String old = System.getProperty("sora.rdma.sysfs");
        System.setProperty("sora.rdma.sysfs", tmp.resolve("none").toString());
        try {
            Availability a = DisniTransport.create(Tracer.OFF).availability();
            assertFalse(a.isAvailable());
            assertTrue(a.unavailabilityCause().orElseThrow().getMessage().contains("no RDMA device"),
                    a.unavailabilityCause().orElseThrow().getMessage());
        } finally {
            if (old == null) System.clearProperty("sora.rdma.sysfs");
            else System.setProperty("sora.rdma.sysfs", old);
        }
    }
}
