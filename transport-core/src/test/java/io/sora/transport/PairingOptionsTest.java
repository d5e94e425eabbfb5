package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PairingOptionsTest {
    /**
     * A receive size above the largest ring (a JSOR file's {@code rcvbuf=512m}, which the rules accept up
     * to 1 GiB) is that ring's size at both ends: the client announced 512 MiB and the server's check
     * refused it, every connection on TCP.
     */
    @Test
    void aReceiveSizeAboveTheLargestRingIsTheLargestRing() {
        assertEquals(PairingOptions.MAX_RING, new PairingOptions(32768, 512 << 20, Duration.ZERO).receiveBufferSize());
        assertEquals(PairingOptions.MAX_RING, new PairingOptions(32768, 1 << 30, Duration.ZERO).receiveBufferSize());
        assertEquals(256 << 20, PairingOptions.MAX_RING);
        assertEquals(45056, new PairingOptions(32768, 45056, Duration.ZERO).receiveBufferSize());
    }
}
