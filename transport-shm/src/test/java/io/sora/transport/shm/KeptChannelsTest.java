package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The client's pool of kept channels, alone (ShmKeptChannelsTest runs it through real pairings). */
class KeptChannelsTest {
    private static final Path LISTENER = Path.of("/nonexistent/sora-test.sock");

    @Test
    void keepsUpToItsLimitPerListener() {
        KeptChannels k = new KeptChannels();
        for (int i = 0; i < KeptChannels.PER_LISTENER; i++) {
            assertTrue(k.give(LISTENER, new KeptChannels.Kept(null, null)), "kept " + i);
        }
        assertFalse(k.give(LISTENER, new KeptChannels.Kept(null, null)));
        assertEquals(KeptChannels.PER_LISTENER, k.count(LISTENER));
    }

    @Test
    void keepsNothingOnceClosed() {
        // the transport's detach closes the pool: a connection that closes afterwards must not be kept, or
        // its channel would stay in the doorbell loop's watch and the detached loop would never end
        KeptChannels k = new KeptChannels();
        k.closeAll();
        assertFalse(k.give(LISTENER, new KeptChannels.Kept(null, null)));
        assertEquals(0, k.count(LISTENER));
    }
}
