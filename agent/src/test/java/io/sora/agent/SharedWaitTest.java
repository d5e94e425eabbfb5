package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The warm-up wait is one budget for the whole JVM, from the first pairing that waits: later pairings
 * wait only for what is left of it (each used to wait the whole budget again while the warm-up ran).
 */
class SharedWaitTest {
    private long now = 1_000;
    private final List<Long> waits = new ArrayList<>();

    @Test
    void laterCallersWaitOnlyForWhatIsLeftOfTheFirstCallersBudget() {
        PathWarmup.SharedWait w = new PathWarmup.SharedWait(300, () -> now, waits::add);
        w.await();
        assertEquals(List.of(300L), waits, "the first waits the whole budget");
        now += 100;
        w.await();
        assertEquals(List.of(300L, 200L), waits, "100 later: what is left");
        now += 200;
        w.await();
        now += 5_000;
        w.await();
        assertEquals(List.of(300L, 200L), waits, "once the budget is spent, nobody waits");
    }

    @Test
    void aDeadlineAtClockZeroStillCounts() {
        now = -300; // the clock (System.nanoTime) may be anywhere, 0 included
        PathWarmup.SharedWait w = new PathWarmup.SharedWait(300, () -> now, waits::add);
        w.await();
        now += 299;
        w.await();
        assertEquals(2, waits.size());
        assertEquals(301L, waits.get(0), "deadline 0 is kept as 1: a nanosecond more");
        assertEquals(2L, waits.get(1), "and it still counts for the later caller");
    }
}
