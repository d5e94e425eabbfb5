package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When a client on a kept segment kicks the server's doorbell thread: after an accept's time, or at once. */
class KickDelayTest {
    @Test
    void aSegmentsFirstConnectionGivesAnAcceptTheLongestWait() {
        assertEquals(KickDelay.MAX_NANOS, new KickDelay().next());
    }

    @Test
    void afterAnAcceptAnsweredTheNextWaitsFourTimesItsAnswerWithinTheBounds() {
        KickDelay k = new KickDelay();
        k.next();
        k.paired(true, 30_000);
        assertEquals(120_000, k.next());
        k.paired(true, 10_000);
        assertEquals(KickDelay.MIN_NANOS, k.next(), "never shorter than the least wait");
        k.paired(true, 5_000_000);
        assertEquals(KickDelay.MAX_NANOS, k.next(), "never longer than the longest");
    }

    @Test
    void afterTheDoorbellThreadDecidedItKicksAtOnceAndTriesTheWaitAgainLessAndLessOften() {
        KickDelay k = new KickDelay();
        k.next();
        k.paired(true, 40_000);
        k.next();
        k.paired(false, 200_000); // no accept came in time
        assertEquals(List.of(7, 16 - 1, 32 - 1), gapsBetweenTries(k, 3), "tries after 8, then 16, then 32 connections");
        // a try that an accept answers brings the wait back for every connection
        k.paired(true, 50_000);
        assertEquals(200_000, k.next());
        k.paired(true, 50_000);
        assertEquals(200_000, k.next());
    }

    @Test
    void theTriesBackOffNoFurtherThanTheLastProbeInterval() {
        KickDelay k = new KickDelay();
        k.next();
        k.paired(false, 1_000);
        int atOnce = 0;
        for (int tries = 0; tries < 12; ) {
            long d = k.next();
            if (d == 0) {
                atOnce++;
                k.paired(false, 1_000);
                continue;
            }
            tries++;
            if (tries == 12) assertEquals(KickDelay.LAST_PROBE - 1, atOnce, "at most every " + KickDelay.LAST_PROBE);
            atOnce = 0;
            k.paired(false, 1_000);
        }
    }

    /** Connections kicked at once before each of {@code tries} tries of the wait (each try failing). */
    private static List<Integer> gapsBetweenTries(KickDelay k, int tries) {
        List<Integer> gaps = new ArrayList<>();
        int atOnce = 0;
        while (gaps.size() < tries) {
            long d = k.next();
            if (d == 0) {
                atOnce++;
            } else {
                gaps.add(atOnce);
                atOnce = 0;
            }
            k.paired(false, 1_000);
        }
        return gaps;
    }
}
