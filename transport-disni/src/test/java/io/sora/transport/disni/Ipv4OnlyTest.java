package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * DiSNI's RDMA CM calls make an IPv4 socket address of any address, from its first four bytes: a
 * client connecting to an IPv6 server asked another host (2001:db8::1 became 32.1.13.184) for an RDMA
 * connection, and a server bound to ::1 listened for RDMA on 0.0.0.0, every device, more than the
 * application's own bind (found in review, 2026-11-28). IPv6 connections stay on TCP, with the reason.
 */
class Ipv4OnlyTest {
    private static final PairingOptions OPTIONS = new PairingOptions(4096, 4096, Duration.ofMillis(100));

    private static DisniTransport transport() throws IOException {
        return DisniTransport.availableForTests(new RdmaProbe.Device("test", "test0", InetAddress.getByName("192.0.2.1")));
    }

    @Test
    void anIpv6ServerIsNotConnectedOverRdma() throws Exception {
        ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getByName("2001:db8::2"), 40000),
                new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 7000));
        PairingResult r = transport().connect(key, OPTIONS, RdmaMediumTest.HOOKS);
        PairingResult.Fallback f = assertInstanceOf(PairingResult.Fallback.class, r);
        assertTrue(f.reason().contains("IPv4 addresses only") && f.reason().contains("2001:db8:0:0:0:0:0:1"), f.reason());
    }

    @Test
    void aServerBoundToAnIpv6AddressDoesNotListenForRdma() throws Exception {
        IOException e = assertThrows(IOException.class, () -> transport().listen(
                new InetSocketAddress(InetAddress.getByName("::1"), 7000), key -> new AcceptPolicy.Allow(OPTIONS)));
        assertTrue(e.getMessage().contains("IPv4 addresses only") && e.getMessage().contains("0:0:0:0:0:0:0:1"), e.getMessage());
    }
}
