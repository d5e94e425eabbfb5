package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Segment names and secrets: unguessable bytes, also for an interrupted caller (an application thread). */
class RandomBytesTest {
    @Test
    void givesTheBytesAskedForAndNeverTheSameTwice() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            byte[] b = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
            assertEquals(Segment.SECRET_SIZE, b.length);
            assertTrue(seen.add(Arrays.toString(b)), "a 128-bit value came twice in 1000 draws");
        }
        assertEquals(0, ShmDirectory.randomBytes(0).length);
        assertEquals(4096, ShmDirectory.randomBytes(4096).length);
    }

    @Test
    void anInterruptedCallerGetsItsBytesAndKeepsItsInterruptAndTheSourceStaysOpen() {
        Thread.currentThread().interrupt();
        try {
            byte[] a = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status is the caller's");
            byte[] b = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
            assertFalse(Arrays.equals(a, b));
        } finally {
            Thread.interrupted();
        }
        assertEquals(Segment.SECRET_SIZE, ShmDirectory.randomBytes(Segment.SECRET_SIZE).length);
    }
}
