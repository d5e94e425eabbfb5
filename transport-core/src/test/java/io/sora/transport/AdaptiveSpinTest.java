package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AdaptiveSpinTest {
    @Test
    void keepsTheFullBudgetWhileSpinningPaysOff() {
        AdaptiveSpin s = new AdaptiveSpin(2000);
        for (int i = 0; i < 10; i++) {
            s.paidOff();
            assertEquals(2000, s.budget());
        }
    }

    @Test
    void halvesToNothingWhenEverySpinEndsInSleep() {
        AdaptiveSpin s = new AdaptiveSpin(2000);
        int[] expected = {1000, 500, 250, 125, 62, 31, 15, 7, 3, 1, 0, 0};
        for (int e : expected) {
            s.sleptAnyway();
            assertEquals(e, s.budget());
        }
    }

    @Test
    void probesAFullSpinAgainOnceInAWhileAndDropsStraightBackIfItFails() {
        AdaptiveSpin s = new AdaptiveSpin(100);
        for (int i = 0; i < 7; i++) {
            s.sleptAnyway();
        }
        assertEquals(0, s.budget());
        for (int i = 0; i < AdaptiveSpin.PROBE_EVERY - 1; i++) {
            s.sleptAnyway();
            assertEquals(0, s.budget());
        }
        s.sleptAnyway();
        assertEquals(100, s.budget(), "probe");
        s.sleptAnyway();
        assertEquals(0, s.budget(), "a failed probe goes straight back to no spinning");
        for (int i = 0; i < AdaptiveSpin.PROBE_EVERY; i++) {
            s.sleptAnyway();
        }
        assertEquals(100, s.budget());
        s.paidOff();
        s.sleptAnyway();
        assertEquals(50, s.budget(), "after a probe that paid off, back to gradual halving");
    }

    @Test
    void onlineCpusParsesTheKernelsList() {
        // the machine running the tests has at least one CPU; the parser must agree with the JDK's upper bound
        int n = RingConnection.onlineCpus();
        assertEquals(true, n >= 1 && n >= Runtime.getRuntime().availableProcessors(), "online " + n);
    }
}
