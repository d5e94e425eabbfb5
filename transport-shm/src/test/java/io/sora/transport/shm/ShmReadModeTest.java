package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read mode each end tells the other through the segment: whether its channel reads through a
 * selector (then the other end's selector does not poll the rings for its answers). Both ends on one
 * segment, as the two processes map it.
 */
class ShmReadModeTest {
    @TempDir
    Path tmp;

    @Test
    void eachEndSeesOnlyWhatThePeerSaid() throws Exception {
        Segment seg = Segment.create(tmp.resolve("seg"), 1 << 12, 1 << 12, ShmDirectory.randomBytes(Segment.SECRET_SIZE));
        ShmMedium server = new ShmMedium(1, seg, true, null, Tracer.OFF, null, false);
        ShmMedium client = new ShmMedium(1, seg, false, null, Tracer.OFF, null, false);
        assertFalse(server.peerReadsThroughSelector(), "nothing said yet");
        assertFalse(client.peerReadsThroughSelector(), "nothing said yet");

        client.markReadsThroughSelector();
        assertTrue(server.peerReadsThroughSelector(), "the client said it reads through a selector");
        assertFalse(client.peerReadsThroughSelector(), "the server said nothing");

        server.markReadsThroughSelector();
        server.markReadsThroughSelector(); // idempotent
        assertTrue(client.peerReadsThroughSelector());
        assertTrue(server.peerReadsThroughSelector());
        // the word is the mode's own: the flags beside it (closed, shut down) stay clear
        assertTrue((server.peerFlags() & (io.sora.transport.RingMedium.CLOSED | io.sora.transport.RingMedium.OUTPUT_SHUTDOWN)) == 0);
        assertTrue((client.peerFlags() & (io.sora.transport.RingMedium.CLOSED | io.sora.transport.RingMedium.OUTPUT_SHUTDOWN)) == 0);
    }

    @Test
    void eachEndSeesTheCpuThePeerLastWaitedOn() throws Exception {
        Segment seg = Segment.create(tmp.resolve("seg"), 1 << 12, 1 << 12, ShmDirectory.randomBytes(Segment.SECRET_SIZE));
        ShmMedium server = new ShmMedium(1, seg, true, null, Tracer.OFF, null, false);
        ShmMedium client = new ShmMedium(1, seg, false, null, Tracer.OFF, null, false);
        assertEquals(-1, server.peerCpu(), "nothing published yet");
        assertEquals(-1, client.peerCpu(), "nothing published yet");
        client.publishCpu(0); // CPU 0 is a CPU, not "unknown"
        assertEquals(0, server.peerCpu());
        assertEquals(-1, client.peerCpu(), "the server published nothing");
        server.publishCpu(5);
        client.publishCpu(1);
        assertEquals(5, client.peerCpu());
        assertEquals(1, server.peerCpu());
        // the word is its own: the flags and read mode on the same line stay clear
        assertEquals(0, server.peerFlags());
        assertFalse(server.peerReadsThroughSelector());
    }
}
