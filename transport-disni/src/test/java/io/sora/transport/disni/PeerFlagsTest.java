package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.sora.transport.RingMedium;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, RDMA defect 2: the peer's flags are set from the poll lock holder (CLOSED, OUTPUT_SHUTDOWN
 * from a credit message) and from other threads (DEAD: CM thread, writer, credit path); no update may
 * be lost. A race test: two threads meet at a spin barrier before each round and update the same
 * fresh flags at once; the round count makes a lost update (a plain read-modify-write) show up in
 * practically every run, while the atomic version can never lose one.
 */
class PeerFlagsTest {
    private static final int ROUNDS = 200_000;
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(60);

    @Test
    void closedOrDeadIsNeverLostWhenSetConcurrently() throws Exception {
        PeerFlags[] closing = new PeerFlags[ROUNDS];
        PeerFlags[] shutting = new PeerFlags[ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
            closing[i] = new PeerFlags();
            shutting[i] = new PeerFlags();
        }
        AtomicInteger arrivals = new AtomicInteger();
        long deadline = System.nanoTime() + BOUND_NANOS;
        Thread messages = new Thread(() -> {
            for (int r = 0; r < ROUNDS; r++) {
                if (!meet(arrivals, r, deadline)) return;
                closing[r].or(RingMedium.CLOSED);           // a credit message with CLOSED
                shutting[r].or(RingMedium.OUTPUT_SHUTDOWN);  // a credit message with OUTPUT_SHUTDOWN
            }
        }, "poll-lock-holder");
        Thread deaths = new Thread(() -> {
            for (int r = 0; r < ROUNDS; r++) {
                if (!meet(arrivals, r, deadline)) return;
                closing[r].markDead();                      // DISCONNECTED on the CM thread
                shutting[r].markDead();
            }
        }, "cm-thread");
        messages.start();
        deaths.start();
        messages.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS) + 1000);
        deaths.join(TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS) + 1000);
        assertFalse(messages.isAlive() || deaths.isAlive(), "both threads ended");
        if (arrivals.get() < 2 * ROUNDS) fail("the threads did not get through every round within the bound");
        int lostClosed = 0;
        int lostDead = 0;
        for (int r = 0; r < ROUNDS; r++) {
            if ((closing[r].get() & RingMedium.CLOSED) == 0) lostClosed++;
            int s = shutting[r].get();
            if ((s & RingMedium.DEAD) == 0 || (s & RingMedium.OUTPUT_SHUTDOWN) == 0) lostDead++;
        }
        assertEquals(0, lostClosed, "rounds in which CLOSED was lost to a concurrent DEAD");
        assertEquals(0, lostDead, "rounds in which DEAD or OUTPUT_SHUTDOWN was lost");
    }

    /** Both threads arrive at round {@code r} before either goes on (bounded spin). */
    private static boolean meet(AtomicInteger arrivals, int r, long deadline) {
        arrivals.incrementAndGet();
        int target = 2 * (r + 1);
        for (int i = 0; arrivals.get() < target; i++) {
            if ((i & 0xfff) == 0 && System.nanoTime() - deadline > 0) return false;
            Thread.onSpinWait();
        }
        return true;
    }

    @Test
    void deadIsNotSetOverClosed() {
        PeerFlags f = new PeerFlags();
        f.or(RingMedium.CLOSED);
        assertFalse(f.markDead());
        assertEquals(RingMedium.CLOSED, f.get());
    }
}
