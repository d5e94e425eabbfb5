package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.Futex;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sleeping readers and writers are always woken, by futex and by doorbell, on two CPUs and on one. */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmWakeUpTest {
    @TempDir
    Path tmp;

    @Test
    void theNativeFutexLibraryLoadsOnThisMachine() {
        assertTrue(Futex.isAvailable(), () -> "libsora did not load: " + Futex.availability().unavailabilityCause().orElse(null));
    }

    @Test
    void theLibraryTellsWhichCpuThisThreadRunsOn() {
        int cpus = Runtime.getRuntime().availableProcessors();
        int cpu = io.sora.transport.ThisCpu.current();
        // availableProcessors counts the CPUs this process may use, not their numbers: a CPU number
        // is only bounded by the machine's
        int configured = (int) new java.io.File("/sys/devices/system/cpu").listFiles(
                f -> f.getName().matches("cpu[0-9]+")).length;
        assertTrue(cpu >= 0 && cpu < Math.max(cpus, configured), "CPU " + cpu + " of " + Math.max(cpus, configured));
    }

    @Test
    void futexSleepersAreWokenEveryTime() throws Exception {
        long[] s = WakeUpCheck.run(tmp, true);
        // {reader futex, reader bell, writer futex, writer bell}
        assertTrue(s[0] > 0, "readers never slept in a futex: " + Arrays.toString(s));
        assertTrue(s[2] > 0, "writers never slept in a futex: " + Arrays.toString(s));
        assertEquals(0, s[1] + s[3], "platform threads with futexes on both sides never park for a doorbell: " + Arrays.toString(s));
    }

    @Test
    void doorbellSleepersAreWokenEveryTime() throws Exception {
        long[] s = WakeUpCheck.run(tmp, false);
        assertTrue(s[1] > 0 && s[3] > 0, "reader and writer must have slept waiting for doorbells: " + Arrays.toString(s));
        assertEquals(0, s[0] + s[2], "futexes were off: " + Arrays.toString(s));
    }

    @Test
    void onOneCpuBothMechanismsWakeEveryTime() throws Exception {
        Path taskset = Path.of("/usr/bin/taskset");
        assertTrue(Files.isExecutable(taskset), "taskset (util-linux) is needed to pin the child to one CPU");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(taskset.toString(), "-c", "0", java, "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), WakeUpCheck.class.getName(), tmp.resolve("child").toString())
                .redirectErrorStream(true).start();
        try {
            String out;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                out = r.lines().reduce("", (a, b) -> a + b + "\n");
            }
            assertTrue(child.waitFor(100, TimeUnit.SECONDS), "child still running");
            assertEquals(0, child.exitValue(), out);
            Matcher m = Pattern.compile("OK futex=true futexMode=\\[(\\d+), 0, (\\d+), 0] bellMode=\\[0, (\\d+), 0, (\\d+)]").matcher(out);
            assertTrue(m.find(), out);
            for (int g = 1; g <= 4; g++) assertTrue(Long.parseLong(m.group(g)) > 0, out);
        } finally {
            child.destroyForcibly();
        }
    }

    /**
     * A selector arms and disarms the reader's waiting word while a stream thread sleeps on it (a key
     * cancelled while its select waits, the channel made blocking, then read): the sleeper keeps its
     * mark and the peer's byte wakes it, whichever way it sleeps. Each failed before the waiting words
     * became bit sets (docs/reliability.md, bug 37): the disarm wiped a parked thread's mark (futexes
     * off, or a virtual thread), the arm overwrote a futex sleeper's; the read then waited out its
     * timeout with the byte in the ring.
     */
    @Test
    void aSelectorsArmAndDisarmLeaveAParkedReadersMark() throws Exception {
        selectorBesideASleepingReader(false);
    }

    @Test
    void aSelectorsArmLeavesAFutexSleepersMark() throws Exception {
        selectorBesideASleepingReader(true);
    }

    private void selectorBesideASleepingReader(boolean futex) throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 64, 64, new ShmSettings(tmp, 0, futex))) {
            ShmFixture.Pair p = fx.pair();
            // no SO_TIMEOUT: a lost wake-up leaves the reader asleep (a timed sleep would only delay the
            // byte), seen as the bounded wait for the read's result running out
            ShmMedium medium = (ShmMedium) ((io.sora.transport.RingConnection) p.server()).medium();
            if (!futex) medium.armReaderWaker(true); // the selector waits first
            Object[] r = ShmStreamSemanticsTest.start("reader", () -> p.server().inputStream().read());
            ShmStreamSemanticsTest.awaitParked((Thread) r[0]);
            // the select ends (its key cancelled meanwhile); or, a futex sleeper there, a selector arms
            medium.armReaderWaker(futex);
            p.client().outputStream().write(42);
            @SuppressWarnings("unchecked")
            java.util.concurrent.CompletableFuture<Integer> read = (java.util.concurrent.CompletableFuture<Integer>) r[1];
            assertEquals(42, read.get(10, TimeUnit.SECONDS), "the sleeping reader woken by the byte");
            if (futex) medium.armReaderWaker(false);
        }
    }
}
