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

    @Test
    void cpuByKindNamesThisProcesssMainThreadAsApplicationAndGrowsWithItsWork() {
        long self = ProcessHandle.current().pid();
        java.util.Map<String, Long> before = FieldChurnClient.cpuTicksByKind(self, "client", -1);
        assertTrue(before.containsKey("client.app") || before.containsKey("client.vm"), "no thread of this JVM: " + before);
        long deadline = System.nanoTime() + 10_000_000_000L;
        long x = 1;
        long grown = 0;
        while (grown < 20_000_000L && System.nanoTime() < deadline) { // bounded: 20 ms of this thread's CPU
            for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
            java.util.Map<String, Long> now = FieldChurnClient.cpuTicksByKind(self, "client", -1);
            grown = 0;
            for (String k : now.keySet()) grown += now.get(k) - before.getOrDefault(k, 0L);
        }
        assertTrue(grown >= 20_000_000L, "20 ms of CPU did not show in 10 s (" + x + ")");
    }

    @Test
    void theReportSumsTheKindsOfBothProcesses() {
        String byThread = "client.app:250,client.gc:36,client.jit:351,server.app:172,server.jit:269";
        assertEquals(422.0, FieldReport.kindSum(byThread, ".app"));
        assertEquals(620.0, FieldReport.kindSum(byThread, ".jit"));
        assertTrue(Double.isNaN(FieldReport.kindSum("-", ".app")));
        assertTrue(Double.isNaN(FieldReport.kindSum(null, ".jit")));
        assertTrue(Double.isNaN(FieldReport.kindSum("client.sora:3", ".jit")));
    }
}
