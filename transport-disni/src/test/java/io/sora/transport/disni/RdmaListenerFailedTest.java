package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * When the listener's CM event loop fails no connection request can come: an accept falls back at once,
 * naming the failure, instead of waiting the pairing wait for a request (found in review, 2026-11-28).
 * The wait here is a minute, so an accept that waited it fails the test's bound.
 */
class RdmaListenerFailedTest {
    @Test
    @org.junit.jupiter.api.Timeout(value = 30, unit = java.util.concurrent.TimeUnit.SECONDS,
            threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void acceptsFallBackAtOnceNamingTheFailure() throws Exception {
        InetSocketAddress bound = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofMinutes(1));
        RdmaServerBinding binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(options), Tracer.OFF, 0, 0);
        try {
            binding.listenerFailed("RDMA CM event channel failed: test");
            ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000), bound);
            PairingResult r = binding.awaitPairing(key, options.fallbackWait(), RdmaMediumTest.HOOKS);
            PairingResult.Fallback f = assertInstanceOf(PairingResult.Fallback.class, r);
            assertTrue(f.reason().contains("rdma listener failed: RDMA CM event channel failed: test"), f.reason());
        } finally {
            binding.close();
        }
    }
}
