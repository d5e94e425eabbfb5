package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DescriptorBudgetTest {
    /** A limit and a count the test sets, counting how often the count is taken. */
    private static final class Fake implements DescriptorBudget.Source {
        volatile long limit;
        volatile long open;
        final AtomicInteger counts = new AtomicInteger();
        final AtomicInteger limits = new AtomicInteger();

        Fake(long limit, long open) {
            this.limit = limit;
            this.open = open;
        }

        @Override
        public long limit() {
            limits.incrementAndGet();
            return limit;
        }

        @Override
        public long open() {
            counts.incrementAndGet();
            return open;
        }
    }

    @Test
    void pairsOnlyWhileTheProcessUsesLessThanHalfOfItsLimit() {
        Fake f = new Fake(256, 127);
        DescriptorBudget b = new DescriptorBudget(f, () -> 0);
        assertNull(b.refusal(), "127 open, one more is 128: half of 256");
        f.open = 128;
        String why = b.refusal();
        assertNotNull(why, "128 open: the next would be past the half");
        assertEquals("file descriptors: 128 of 256 (RLIMIT_NOFILE) in use; sora pairs only below half of the limit"
                + " (a paired connection holds one more on each side)", why);
    }

    @Test
    void theSoftLimitIsTheFirstFieldOfTheLimitsLine() {
        // the rest of /proc/self/limits' "Max open files" line, as Linux prints it
        assertEquals(1024, DescriptorBudget.softLimit("            1024                 524288               files     "));
        assertEquals(Long.MAX_VALUE, DescriptorBudget.softLimit("  unlimited            unlimited            files"));
        assertEquals(-1, DescriptorBudget.softLimit("   "));
        assertEquals(-1, DescriptorBudget.softLimit(""));
        assertEquals(Long.parseLong(procSoftLimit()), DescriptorBudget.PROC.limit(), "this process's, read as ulimit -Sn prints it");
    }

    /** This process's soft RLIMIT_NOFILE, read the long way (a regular expression). */
    private static String procSoftLimit() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) return line.substring(14).trim().split("\\s+")[0];
            }
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no Max open files line");
    }

    @Test
    void anUnknownOrUnlimitedLimitNeverRefuses() {
        assertNull(new DescriptorBudget(new Fake(-1, 1_000_000), () -> 0).refusal());
        assertNull(new DescriptorBudget(new Fake(Long.MAX_VALUE, 1_000_000), () -> 0).refusal());
        assertNull(new DescriptorBudget(new Fake(1024, -1), () -> 0).refusal());
    }

    @Test
    void farBelowTheLimitTheCountIsReusedForABoundedNumberOfDecisionsAndTime() {
        Fake f = new Fake(8192, 100); // below an eighth (1024)
        AtomicLong now = new AtomicLong();
        DescriptorBudget b = new DescriptorBudget(f, now::get);
        for (int i = 0; i < DescriptorBudget.RECOUNT_EVERY; i++) assertNull(b.refusal());
        assertEquals(1, f.counts.get(), "one count for the first " + DescriptorBudget.RECOUNT_EVERY + " decisions");
        f.open = 5000; // the process grew past the half meanwhile
        assertNotNull(b.refusal(), "the next decision counts again and refuses");
        assertEquals(2, f.counts.get());
        f.open = 100;
        assertNull(b.refusal());
        now.addAndGet(DescriptorBudget.RECOUNT_NANOS);
        f.open = 5000;
        assertNotNull(b.refusal(), "after a second the count is taken again whatever the number of decisions");
    }

    @Test
    void farBelowTheLimitTheLimitIsReadAgainOnlyAfterTenSeconds() {
        Fake f = new Fake(8192, 100);
        AtomicLong now = new AtomicLong();
        DescriptorBudget b = new DescriptorBudget(f, now::get);
        for (int i = 0; i < 5 * DescriptorBudget.RECOUNT_EVERY; i++) assertNull(b.refusal());
        assertEquals(5, f.counts.get(), "counted every " + DescriptorBudget.RECOUNT_EVERY + " decisions");
        assertEquals(1, f.limits.get(), "the limit read once");
        f.limit = 150; // lowered (setrlimit): seen once the limit is read again
        now.addAndGet(DescriptorBudget.LIMIT_TTL_NANOS);
        assertNotNull(b.refusal(), "after ten seconds the lowered limit refuses");
        assertEquals(2, f.limits.get());
        assertNotNull(b.refusal());
        assertEquals(3, f.limits.get(), "above an eighth of the limit it is read with every count");
    }

    @Test
    void aboveAnEighthOfTheLimitEveryDecisionCounts() {
        Fake f = new Fake(1024, 200); // above an eighth (128)
        DescriptorBudget b = new DescriptorBudget(f, () -> 0);
        for (int i = 0; i < 5; i++) assertNull(b.refusal());
        assertEquals(5, f.counts.get());
    }

    @Test
    void theProcessSourceReadsThisJvmsLimitAndCount() {
        long limit = DescriptorBudget.PROC.limit();
        long open = DescriptorBudget.PROC.open();
        assertTrue(limit > 0, "RLIMIT_NOFILE from /proc/self/limits: " + limit);
        assertTrue(open > 3 && open < limit, "open descriptors from /proc/self/fd: " + open);
    }
}
