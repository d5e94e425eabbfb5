package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The waiting policy, driven by a fake clock (no real time is measured here). */
class AdaptiveWaitTest {
    private final long[] now = {1_000_000};

    private AdaptiveWait policy() {
        return new AdaptiveWait(true, () -> now[0]);
    }

    /** One wait that ends (caught) after {@code nanos}, the clock moving 100 ns per round. */
    private static int caughtAfter(AdaptiveWait w, long[] now, long nanos) {
        w.begin();
        long end = now[0] + nanos;
        int rounds = 0;
        while (now[0] < end) {
            if (!w.idle()) throw new AssertionError("slept after " + rounds + " rounds, wait of " + nanos + " ns");
            now[0] += 100;
            rounds++;
        }
        w.caught();
        w.end();
        return rounds;
    }

    /** One wait that goes to sleep and ends after {@code nanos} in all. */
    private static void sleptFor(AdaptiveWait w, long[] now, long nanos) {
        w.begin();
        long end = now[0] + nanos;
        while (w.idle()) now[0] += 100;
        now[0] = Math.max(now[0], end);
        w.slept();
        w.end();
    }

    /** As {@link #sleptFor}, the medium telling that the wake-up cost {@code wakeNanos}. */
    private static void sleptFor(AdaptiveWait w, long[] now, long nanos, long wakeNanos) {
        w.begin();
        long end = now[0] + nanos;
        while (w.idle()) now[0] += 100;
        now[0] = Math.max(now[0], end);
        w.slept(wakeNanos);
        w.end();
    }

    @Test
    void aWakeUpDearerThanTheWaitRaisesTheLimitSoTheWaitIsCaughtAwake() {
        AdaptiveWait w = policy();
        // the peer answers after 400 µs (beyond the default limit) and each wake-up costs 1 ms more:
        // cheaper awake
        for (int i = 0; i < 60; i++) sleptFor(w, now, 1_400_000, 1_000_000);
        assertTrue(w.limitNanos() >= 2_000_000, "limit " + w.limitNanos());
        assertTrue(w.budgetNanos() > 400_000, "budget " + w.budgetNanos());
        caughtAfter(w, now, 400_000); // throws if it went to sleep
    }

    @Test
    void aSleepIsLearntWithoutItsOwnWakeUpSoSleepingDoesNotJustifyItself() {
        AdaptiveWait w = policy();
        // every wait slept: 700 µs in all, of which 400 µs were the wake-up (a 300 µs answer)
        for (int i = 0; i < 60; i++) sleptFor(w, now, 700_000, 400_000);
        assertTrue(w.budgetNanos() >= 300_000, "budget " + w.budgetNanos());
        caughtAfter(w, now, 300_000); // throws if it went to sleep
    }

    @Test
    void cheapWakeUpsKeepTheDefaultLimitAndLongWaitsSleep() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 60; i++) sleptFor(w, now, 400_000, 10_000);
        assertEquals(AdaptiveWait.MAX_BUDGET_NANOS, w.limitNanos());
        assertEquals(AdaptiveWait.MIN_BUDGET_NANOS, w.budgetNanos());
    }

    @Test
    void theLearntLimitIsBounded() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 60; i++) sleptFor(w, now, 1_100_000_000, 1_000_000_000);
        assertEquals(AdaptiveWait.MAX_LIMIT_NANOS, w.limitNanos());
        assertEquals(AdaptiveWait.MIN_BUDGET_NANOS, w.budgetNanos(), "waits longer than the limit still sleep at once");
    }

    @Test
    void disabledSleepsAtOnce() {
        AdaptiveWait w = new AdaptiveWait(false, () -> now[0]);
        w.begin();
        assertFalse(w.idle());
    }

    @Test
    void shortWaitsKeepTheMinimumBudgetAndAreCaughtAwake() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 100; i++) caughtAfter(w, now, 3_000);
        assertEquals(AdaptiveWait.MIN_BUDGET_NANOS, w.budgetNanos());
    }

    @Test
    void thinkTimeOfAHundredMicrosecondsIsLearntAndThenCaughtAwake() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 60; i++) sleptFor(w, now, 100_000);
        assertTrue(w.budgetNanos() >= 200_000, "budget " + w.budgetNanos());
        caughtAfter(w, now, 100_000); // throws if it went to sleep
    }

    @Test
    void longWaitsDropTheBudgetToTheMinimumSoIdleConnectionsDoNotBurnTheCpu() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 60; i++) sleptFor(w, now, 100_000);
        for (int i = 0; i < 60; i++) sleptFor(w, now, 5_000_000);
        assertEquals(AdaptiveWait.MIN_BUDGET_NANOS, w.budgetNanos());
    }

    @Test
    void waitsAnsweredOnlyAfterYieldingShrinkTheSpinPhaseToNothing() {
        AdaptiveWait w = policy();
        assertEquals(AdaptiveWait.MAX_SPIN_NANOS, w.spinNanos());
        // answered after the spin phase (10 µs > 8 µs of spinning): each wait yielded
        for (int i = 0; i < 40; i++) caughtAfter(w, now, 10_000);
        assertEquals(0, w.spinNanos());
        // a wait answered while spinning brings the spin phase back (the probe every 64 waits does it too)
        for (int i = 0; i < AdaptiveWait.PROBE_EVERY; i++) caughtAfter(w, now, 1_000);
        assertEquals(AdaptiveWait.MAX_SPIN_NANOS, w.spinNanos());
    }

    /** One wait at {@code placement} caught after {@code nanos}; whether it yielded. */
    private static boolean yieldedWaiting(AdaptiveWait w, long[] now, int placement, long nanos) {
        w.begin(placement);
        long end = now[0] + nanos;
        while (now[0] < end) {
            if (!w.idle()) throw new AssertionError("slept within a wait of " + nanos + " ns");
            now[0] += 100;
        }
        boolean yielded = w.yielded();
        w.caught();
        w.end();
        return yielded;
    }

    @Test
    void aPeerOnThisCpuIsHandedTheCpuAtOnceWithoutSpinning() {
        AdaptiveWait w = policy();
        // 1 µs: well inside the spin phase, had the peer been elsewhere or unknown
        assertTrue(yieldedWaiting(w, now, RingMedium.PEER_HERE, 1_000), "yielded from the start");
        assertFalse(yieldedWaiting(w, now, RingMedium.PEER_UNKNOWN, 1_000), "unknown: spins first");
        // such waits teach nothing about the spin phase (it serves peers of unknown placement)
        for (int i = 0; i < 40; i++) yieldedWaiting(w, now, RingMedium.PEER_HERE, 10_000);
        assertEquals(AdaptiveWait.MAX_SPIN_NANOS, w.spinNanos());
    }

    @Test
    void aPeerOnAnotherCpuGetsTheFullSpinPhaseEvenWhenTheLearntOneShrank() {
        AdaptiveWait w = policy();
        for (int i = 0; i < 40; i++) caughtAfter(w, now, 10_000); // answered after yielding: shrinks
        assertEquals(0, w.spinNanos());
        assertTrue(yieldedWaiting(w, now, RingMedium.PEER_UNKNOWN, 5_000), "unknown: the learnt (empty) spin phase");
        assertFalse(yieldedWaiting(w, now, RingMedium.PEER_ELSEWHERE, 5_000), "elsewhere: spins its 8 µs");
        assertTrue(yieldedWaiting(w, now, RingMedium.PEER_ELSEWHERE, 10_000), "and yields after them");
    }

    @Test
    void placementComparesThisCpuWithTheOneThePeerPublished() {
        HeapRingMedium[] ends = HeapRingMedium.pair(64, 64);
        HeapRingMedium m = ends[0];
        assertEquals(RingMedium.PEER_UNKNOWN, m.peerPlacement(-1), "this thread's CPU unknown");
        assertEquals(RingMedium.PEER_UNKNOWN, m.peerPlacement(1), "the peer published none");
        assertEquals(1, m.publishedCpu, "this thread's CPU is published for the peer");
        ends[1].publishCpu(1);
        assertEquals(RingMedium.PEER_HERE, m.peerPlacement(1));
        assertEquals(RingMedium.PEER_ELSEWHERE, m.peerPlacement(0));
        assertEquals(0, m.publishedCpu);
    }

    @Test
    void atMostHalfTheCpusBusyWaitAtOnceAndSlotsAreGivenBack() {
        List<AdaptiveWait> holders = new ArrayList<>();
        for (int i = 0; i < AdaptiveWait.MAX_BUSY; i++) {
            AdaptiveWait w = policy();
            w.begin();
            assertTrue(w.idle(), "slot " + i);
            holders.add(w);
        }
        AdaptiveWait late = policy();
        late.begin();
        assertFalse(late.idle(), "all busy slots are taken: sleep at once");
        late.end();
        holders.get(0).end();
        AdaptiveWait next = policy();
        next.begin();
        assertTrue(next.idle(), "a slot was given back");
        next.end();
        for (AdaptiveWait w : holders) w.end();
    }
}
