package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which looks of a selector's poll of the rings yield the CPU ({@link ChannelSelection#yieldsAt}). */
class ChannelSelectionPollTest {
    private static final long AFTER = ChannelSelection.SELECT_YIELD_AFTER_NANOS;

    /** Looks that yield among the first {@code looks}, the clock at {@code elapsed} throughout. */
    private static int yieldsAmong(int poll, int looks, long elapsed) {
        int n = 0;
        for (int look = 0; look < looks; look++) {
            if (ChannelSelection.yieldsAt(poll, look, elapsed)) n++;
        }
        return n;
    }

    @Test
    void aPollWhosePeersRunElsewhereSpinsUntilItsYieldPointThenYieldsAtEveryLook() {
        assertEquals(0, yieldsAmong(ChannelSelection.POLL_SPINNING, 200, 0));
        assertEquals(0, yieldsAmong(ChannelSelection.POLL_SPINNING, 200, AFTER));
        assertEquals(200, yieldsAmong(ChannelSelection.POLL_SPINNING, 200, AFTER + 1));
    }

    @Test
    void aPollWhosePeerRunsOnThisCpuKeepsYieldingAfterAFirstYieldThatDidNotHandTheCpuOver() {
        // the first look hands the CPU to the peer; when that did not happen (the peer not runnable here
        // yet), it must be handed the CPU again within about a microsecond, not only after the 8 us
        assertTrue(ChannelSelection.yieldsAt(ChannelSelection.POLL_YIELDING, 0, 0));
        assertFalse(ChannelSelection.yieldsAt(ChannelSelection.POLL_YIELDING, 1, 0), "spins between its yields");
        assertTrue(ChannelSelection.yieldsAt(ChannelSelection.POLL_YIELDING, 16, 1_000), "yields again after 16 looks");
        assertEquals(8, yieldsAmong(ChannelSelection.POLL_YIELDING, 128, AFTER / 2));
        assertEquals(128, yieldsAmong(ChannelSelection.POLL_YIELDING, 128, AFTER + 1), "past the mark: every look");
    }
}
