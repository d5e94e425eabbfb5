package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.PairingOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An accepted RDMA connection whose HELLO never comes (a sora client that died after connecting, or any
 * RDMA CM client on the port that is not sora) is dropped after {@link RdmaServerBinding#HELLO_WAIT_NANOS}:
 * it held a completion thread, a queue pair and its buffers until the listener closed, so a client could
 * pile them up (found in review, 2026-11-28). Over {@link FakeVerbs}, with the wait shortened.
 */
class RdmaHelloWaitTest {
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aConnectionWithoutHelloIsDropped() throws Exception {
        InetSocketAddress bound = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofMillis(100));
        RdmaServerBinding binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(options), Tracer.OFF, 0, 0);
        try {
            binding.helloWait(200_000_000L);
            FakeVerbs[] v = FakeVerbs.pair();
            RdmaMedium server = new RdmaMedium(1, new QueuePair(v[1], 1, Tracer.OFF), Tracer.OFF);
            CountDownLatch released = new CountDownLatch(1);
            RdmaLink link = binding.accepted(1, server, null, released::countDown);
            link.established(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            assertEquals(1, binding.unclaimedCount(), "accepted, waiting for its HELLO");
            // the client end exists and stays silent
            RdmaMedium client = new RdmaMedium(2, new QueuePair(v[0], 2, Tracer.OFF), Tracer.OFF);
            try {
                assertTrue(released.await(30, TimeUnit.SECONDS), "the connection without a HELLO was released (its CM id destroyed)");
                assertEquals(0, binding.unclaimedCount(), "nothing of it stays with the binding");
            } finally {
                client.abort();
            }
        } finally {
            binding.close();
        }
    }
}
