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
    void aWaitForAPeerOnThisCpuYieldsAtItsFirstRoundAndReadsTheClockTwice() {
        int[] reads = {0};
        AdaptiveWait w = new AdaptiveWait(true, () -> {
            reads[0]++;
            return now[0];
        });
        for (int i = 0; i < 3; i++) {
            reads[0] = 0;
            w.begin(RingMedium.PEER_HERE);
            try {
                assertTrue(w.idle(), "awake");
                assertTrue(w.yielded(), "the first round yields: the peer cannot answer while this thread spins");
                now[0] += 1_500; // the peer's turn
                w.caught(); // answered after that one yield
            } finally {
                w.end(); // the busy-waiting slot is the JVM's: a failure here must not fail the other tests
            }
            // when the wait began, and when the yield came back (the catch uses that reading): a same-CPU
            // round trip is two such waits, and each clock reading cost as much as the rest of the wait's code
            assertEquals(2, reads[0], "clock readings of a wait caught after one yield");
        }
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
    void aJvmConfinedToOneCpuSleepsWhenCrowdedUnlessToldOtherwise() {
        assertTrue(AdaptiveWait.crowdedSleepDefault(null, 1), "one CPU: a yield hands it to strangers");
        assertFalse(AdaptiveWait.crowdedSleepDefault(null, 2), "more CPUs: an option");
        assertTrue(AdaptiveWait.crowdedSleepDefault("true", 4));
        assertFalse(AdaptiveWait.crowdedSleepDefault("false", 1), "off everywhere when asked");
    }

    @Test
    void theWarmUpsExerciseOfEveryKindOfWaitEndsAndLeavesNothingBehind() {
        for (boolean before : new boolean[] {false, true}) {
            CpuPressure.exercise(before);
            try {
                AdaptiveWait.exercise();
                assertEquals(before, CpuPressure.exercising(), "the machine's crowding is read as before");
            } finally {
                CpuPressure.exercise(false);
            }
        }
        // every busy-waiting slot was given back: as many waits as there are slots can still spin
        List<AdaptiveWait> holders = new ArrayList<>();
        try {
            for (int i = 0; i < AdaptiveWait.MAX_BUSY; i++) {
                AdaptiveWait w = policy();
                holders.add(w);
                w.begin();
                assertTrue(w.idle(), "slot " + i + " is free after the exercise");
            }
        } finally {
            for (AdaptiveWait w : holders) w.end();
        }
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

    /**
     * What a wait may overrun its budget by in these tests: a wait spinning for a peer elsewhere reads
     * the clock every 8th round, and the test clock moves 100 ns a round.
     */
    private static final long CLOCK_SLACK_NANOS = 8 * 100;

    /** How long one wait stays awake (the clock moving 100 ns per round) before it goes to sleep. */
    private static long awakeFor(AdaptiveWait w, long[] now, int placement) {
        w.begin(placement);
        long start = now[0];
        while (w.idle()) {
            now[0] += 100;
            if (now[0] - start > 10_000_000) throw new AssertionError("never went to sleep");
        }
        long awake = now[0] - start;
        w.slept();
        w.end();
        return awake;
    }

    @Test
    void onAMachineWithNoCpuToSpareAWaitStaysAwakeBrieflyThenSleeps() {
        boolean[] crowded = {false};
        AdaptiveWait w = new AdaptiveWait(true, () -> now[0], crowdedWhen(crowded));
        long spare = awakeFor(w, now, RingMedium.PEER_ELSEWHERE);
        assertFalse(w.crowded());
        crowded[0] = true;
        long none = awakeFor(w, now, RingMedium.PEER_ELSEWHERE);
        assertTrue(w.crowded());
        assertFalse(w.yielded(), "a peer elsewhere: spin, never hand the CPU to whoever is queued");
        assertTrue(none >= AdaptiveWait.MIN_BUDGET_NANOS && none <= AdaptiveWait.MIN_BUDGET_NANOS + CLOCK_SLACK_NANOS,
                "a peer elsewhere, crowded: spin the least budget, awake " + none + " ns");
        assertTrue(spare >= 2 * none, "spare CPUs: awake " + spare + " ns, crowded " + none + " ns");
        // a peer here on a crowded machine: shorter still
        long here = awakeFor(w, now, RingMedium.PEER_HERE);
        assertTrue(here <= AdaptiveWait.CROWDED_BUDGET_NANOS + CLOCK_SLACK_NANOS, "peer here, awake " + here + " ns");
    }

    @Test
    void onAMachineWithNoCpuToSpareAJvmOnOneCpuYieldsToAPeerOnThisCpu() {
        AdaptiveWait w = new AdaptiveWait(true, () -> now[0], crowdedWhen(new boolean[] {true}), false);
        long awake = awakeFor(w, now, RingMedium.PEER_HERE);
        assertTrue(w.yielded(), "the peer may be queued on this CPU");
        assertTrue(awake <= AdaptiveWait.CROWDED_BUDGET_NANOS + CLOCK_SLACK_NANOS, "awake " + awake + " ns");
    }

    @Test
    void onAMachineWithNoCpuToSpareAJvmWithCpusToChooseFromSleepsUnlessThePeerRunsElsewhere() {
        boolean[] crowded = {true};
        AdaptiveWait w = new AdaptiveWait(true, () -> now[0], crowdedWhen(crowded), true);
        for (int placement : new int[] {RingMedium.PEER_HERE, RingMedium.PEER_UNKNOWN}) {
            w.begin(placement);
            int rounds = 0;
            while (w.idle() && rounds < 100) {
                now[0] += 100;
                rounds++;
            }
            w.slept();
            w.end();
            // the first look at the clock (at once, or after 8 spin rounds where the placement is unknown)
            assertTrue(rounds <= 8, "placement " + placement + ": sleep, a yield may queue this thread behind a stranger; "
                    + rounds + " rounds awake");
            assertFalse(w.yielded());
        }
        long awake = awakeFor(w, now, RingMedium.PEER_ELSEWHERE);
        assertTrue(awake >= AdaptiveWait.MIN_BUDGET_NANOS && awake <= AdaptiveWait.MIN_BUDGET_NANOS + CLOCK_SLACK_NANOS,
                "a peer on another CPU may answer at once: spin the least budget, awake " + awake + " ns");
        // CPUs to spare: the same waits stay awake
        crowded[0] = false;
        long spare = awakeFor(w, now, RingMedium.PEER_HERE);
        assertTrue(w.yielded() && spare > AdaptiveWait.CROWDED_BUDGET_NANOS, "awake " + spare + " ns");
    }

    @Test
    void aCrowdedWaitIsCutShortEvenWhenTheTypicalWaitIsLong() {
        boolean[] crowded = {false};
        AdaptiveWait w = new AdaptiveWait(true, () -> now[0], crowdedWhen(crowded), false);
        for (int i = 0; i < 60; i++) sleptFor(w, now, 100_000); // 100 µs of think time, learnt
        assertTrue(w.budgetNanos() >= 100_000, "budget " + w.budgetNanos());
        crowded[0] = true;
        long awake = awakeFor(w, now, RingMedium.PEER_ELSEWHERE);
        assertTrue(awake <= AdaptiveWait.MIN_BUDGET_NANOS + CLOCK_SLACK_NANOS, "peer elsewhere, awake " + awake + " ns");
        awake = awakeFor(w, now, RingMedium.PEER_HERE);
        assertTrue(awake <= AdaptiveWait.CROWDED_BUDGET_NANOS + CLOCK_SLACK_NANOS, "peer here, awake " + awake + " ns");
        // and a short typical wait shortens a wait for a peer here further: twice the typical wait
        crowded[0] = false;
        for (int i = 0; i < 80; i++) caughtAfter(w, now, 1_000);
        crowded[0] = true;
        long shortWait = awakeFor(w, now, RingMedium.PEER_HERE);
        assertTrue(shortWait <= 4_096 + CLOCK_SLACK_NANOS, "typical wait ~1 µs: awake " + shortWait + " ns");
    }

    /** A machine crowded while {@code flag[0]}. */
    private static java.util.function.LongPredicate crowdedWhen(boolean[] flag) {
        return t -> flag[0];
    }

    @Test
    void whileTheWarmUpExercisesItWaitsFindTheMachineCrowdedAndNotInTurn() {
        CpuPressure.exercise(true);
        try {
            int crowded = 0;
            for (int i = 0; i < 10; i++) if (CpuPressure.crowded(now[0] + i * CpuPressure.PERIOD_NANOS)) crowded++;
            assertEquals(5, crowded, "both branches of the waiting code, in turn");
        } finally {
            CpuPressure.exercise(false);
        }
    }

    @Test
    void theRunnableCountIsReadFromTheKernelsLoadLine() {
        byte[] line = "0.52 0.58 0.59 3/467 12345\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(3, CpuPressure.parseRunning(line, line.length));
        byte[] big = "10.00 9.00 8.00 128/2000 1\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(128, CpuPressure.parseRunning(big, big.length));
        byte[] bad = "0.52 0.58 0.59 x/467 1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(-1, CpuPressure.parseRunning(bad, bad.length));
        assertEquals(-1, CpuPressure.parseRunning(line, 10), "cut short");
    }
}
