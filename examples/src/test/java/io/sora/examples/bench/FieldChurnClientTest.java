package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The setup row's CPU figure: this process's CPU time read from /proc, in clock ticks. */
class FieldChurnClientTest {
    @Test
    void cpuTicksOfAProcessGrowWithItsWorkAndAreMinusOneForNoProcess() {
        long self = ProcessHandle.current().pid();
        long before = FieldChurnClient.cpuTicks(self);
        assertTrue(before >= 0, "could not read /proc/" + self + "/stat");
        long deadline = System.nanoTime() + 10_000_000_000L;
        long x = 1;
        long now = before;
        while (now < before + 3 && System.nanoTime() < deadline) { // bounded: CPU work until 3 ticks show
            for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
            now = FieldChurnClient.cpuTicks(self);
        }
        assertTrue(now >= before + 3, "30 ms of CPU did not show in 10 s: " + before + " -> " + now + " (" + x + ")");
        assertEquals(-1, FieldChurnClient.cpuTicks(Long.MAX_VALUE));
    }
}
