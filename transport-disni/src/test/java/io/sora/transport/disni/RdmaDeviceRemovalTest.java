package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.RdmaCmEvent;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.PairingOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * RDMA_CM_EVENT_DEVICE_REMOVAL breaks the connection, with the reason: it was ignored, and a reader of a
 * connection whose device went waited for good (found in review, 2026-11-28). Over {@link FakeVerbs}.
 */
class RdmaDeviceRemovalTest {
    @Test
    void aRemovedDeviceBreaksTheConnection() throws Exception {
        InetSocketAddress bound = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofMillis(100));
        RdmaServerBinding binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(options), Tracer.OFF, 0, 0);
        FakeVerbs[] v = FakeVerbs.pair();
        RdmaMedium server = new RdmaMedium(1, new QueuePair(v[1], 1, Tracer.OFF), Tracer.OFF);
        RdmaMedium client = new RdmaMedium(2, new QueuePair(v[0], 2, Tracer.OFF), Tracer.OFF);
        try {
            RdmaLink link = binding.accepted(1, server, null, () -> { });
            link.onCmEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL, null);
            String failure = server.failure();
            assertTrue(failure != null && failure.contains("RDMA_CM_EVENT_DEVICE_REMOVAL"), "the connection broke, naming why: " + failure);
        } finally {
            client.abort();
            binding.close();
        }
    }
}
