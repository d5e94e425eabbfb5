package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sora.transport.RingMedium;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, RDMA defect 2: the peer's flags are set from the poll lock holder (CLOSED, OUTPUT_SHUTDOWN
 * from a credit message) and from other threads (DEAD: CM thread, writer, credit path); no update may
 * be lost. A race test: two threads meet at a barrier before each round and update the same fresh
 * flags at once; the round count makes a lost update (a plain read-modify-write) show up in
 * practically every run, while the atomic version can never lose one.
 *
 * <p>Load cannot fail it: the test waits for its condition (every round done), not for a time (it
 * had a 60 s bound, which heavy load exceeded twice). The only bound is a hang guard on progress: no
 * round completed in {@link #STALL_NANOS}. A thread at the barrier spins for about a time slice
 * ({@link #SPINS}), then yields its CPU until its partner arrives: the spinning is what makes the
 * two threads run at once (with 2^12 spins, under a load of 7 on two CPUs only 48 of the 200,000
 * rounds ran without a yield and the plain read-modify-write lost nothing; with 2^16, 184,377 did
 * and it lost CLOSED in 2,373 rounds), the yield keeps a partner without a CPU from waiting on a
 * spinning thread. Rounds in which neither thread yielded ran on two CPUs at once; with none (a
 * machine too loaded to run the two threads together) the test is aborted as unproven, not passed.
 */
class PeerFlagsTest {
    private static final int ROUNDS = 200_000;
    /** Spins at the barrier (about a time slice) before a thread yields to a partner that is not running. */
    private static final int SPINS = 1 << 16;
    /** Hang guard only: load slows the rounds down, it does not stop them for minutes. */
    private static final long STALL_NANOS = TimeUnit.MINUTES.toNanos(5);

    @Test
    void closedOrDeadIsNeverLostWhenSetConcurrently() throws Exception {
        PeerFlags[] closing = new PeerFlags[ROUNDS];
        PeerFlags[] shutting = new PeerFlags[ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
            closing[i] = new PeerFlags();
            shutting[i] = new PeerFlags();
        }
        AtomicInteger arrivals = new AtomicInteger();
        boolean[] messagesYielded = new boolean[ROUNDS];
        boolean[] deathsYielded = new boolean[ROUNDS];
        Thread messages = new Thread(() -> {
            for (int r = 0; r < ROUNDS; r++) {
                messagesYielded[r] = meet(arrivals, r);
                closing[r].or(RingMedium.CLOSED);           // a credit message with CLOSED
                shutting[r].or(RingMedium.OUTPUT_SHUTDOWN);  // a credit message with OUTPUT_SHUTDOWN
            }
        }, "poll-lock-holder");
        Thread deaths = new Thread(() -> {
            for (int r = 0; r < ROUNDS; r++) {
                deathsYielded[r] = meet(arrivals, r);
                closing[r].markDead();                      // DISCONNECTED on the CM thread
                shutting[r].markDead();
            }
        }, "cm-thread");
        messages.setDaemon(true);
        deaths.setDaemon(true);
        messages.start();
        deaths.start();
        awaitWithProgress(arrivals, messages, deaths);
        int coScheduled = 0;
        int lostClosed = 0;
        int lostDead = 0;
        for (int r = 0; r < ROUNDS; r++) {
            if (!messagesYielded[r] && !deathsYielded[r]) coScheduled++;
            if ((closing[r].get() & RingMedium.CLOSED) == 0) lostClosed++;
            int s = shutting[r].get();
            if ((s & RingMedium.DEAD) == 0 || (s & RingMedium.OUTPUT_SHUTDOWN) == 0) lostDead++;
        }
        assertEquals(0, lostClosed, "rounds in which CLOSED was lost to a concurrent DEAD (of " + coScheduled + " co-scheduled)");
        assertEquals(0, lostDead, "rounds in which DEAD or OUTPUT_SHUTDOWN was lost (of " + coScheduled + " co-scheduled)");
        assumeTrue(coScheduled > 0, "no round ran on two CPUs at once: nothing was raced on this machine now");
    }

    /**
     * Waits until both threads ended, on the condition, not on a time: fails only if no round was
     * completed for {@link #STALL_NANOS} (a hang).
     */
    private static void awaitWithProgress(AtomicInteger arrivals, Thread... threads) throws InterruptedException {
        int seen = -1;
        long lastProgress = System.nanoTime();
        for (Thread t : threads) {
            while (t.isAlive()) {
                t.join(100); // the condition is t's end; the timed join only lets the hang guard look
                int now = arrivals.get();
                if (now != seen) {
                    seen = now;
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > STALL_NANOS) {
                    fail("no round completed in " + TimeUnit.NANOSECONDS.toSeconds(STALL_NANOS) + " s: the threads hang at "
                            + now + " arrivals of " + 2 * ROUNDS);
                }
            }
        }
        assertEquals(2 * ROUNDS, arrivals.get(), "arrivals at the barrier");
        for (Thread t : threads) assertFalse(t.isAlive(), t.getName() + " ended");
    }

    /**
     * Both threads arrive at round {@code r} before either goes on: spins, then yields while the
     * partner has not arrived. Returns whether this thread had to yield.
     */
    private static boolean meet(AtomicInteger arrivals, int r) {
        arrivals.incrementAndGet();
        int target = 2 * (r + 1);
        boolean yielded = false;
        for (int i = 0; arrivals.get() < target; i++) {
            if (i < SPINS) {
                Thread.onSpinWait();
            } else {
                yielded = true;
                Thread.yield();
            }
        }
        return yielded;
    }

    @Test
    void deadIsNotSetOverClosed() {
        PeerFlags f = new PeerFlags();
        f.or(RingMedium.CLOSED);
        assertFalse(f.markDead());
        assertEquals(RingMedium.CLOSED, f.get());
    }
}
