package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process warm-up of the data path (the agent runs it in the background before a JVM's first
 * pairing): its round trips, byte arrays (and buffers, for a JVM that uses channels), one thread then
 * two, complete (it checks every
 * transfer itself and reports false on any failure), and leave no segment file behind.
 */
class DataPathWarmupTest {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "channels={0}")
    @ValueSource(booleans = {false, true})
    void roundTripsCompleteAndLeaveNothingBehind(boolean channels) throws Exception {
        ShmTransport shm = new ShmTransport(new ShmSettings(tmp, 200), Tracer.OFF);
        assertTrue(shm.availability().isAvailable(), "shm available in " + tmp);
        // 600 rounds: each size many times (with channels: through the array, heap-buffer and
        // direct-buffer entry points), 75 of them on two threads
        assertTrue(shm.warmDataPath(600, new TestHooks(), channels), "the warm-up failed (it reports any transfer that went wrong)");
        try (Stream<Path> users = Files.list(tmp)) {
            for (Path dir : (Iterable<Path>) users::iterator) {
                try (Stream<Path> left = Files.list(dir)) {
                    assertEquals(0, left.count(), "files left in " + dir);
                }
            }
        }
    }

    /**
     * An abort (the JVM exiting, the agent detaching) while the echo thread runs ends both threads at once:
     * left asleep in the futex, a warm-up thread held the JVM's exit 300 ms (HotSpot waits for threads in
     * native code). The echo part here is long (ten million round trips: minutes), so only the abort ends it.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anAbortEndsTheThreadedPartAtOnce() throws Exception {
        ShmTransport shm = new ShmTransport(new ShmSettings(tmp, 200), Tracer.OFF);
        assertTrue(shm.availability().isAvailable(), "shm available in " + tmp);
        ShmDirectory dir = new ShmDirectory(tmp);
        java.util.concurrent.atomic.AtomicReference<Boolean> result = new java.util.concurrent.atomic.AtomicReference<>();
        Thread runner = new Thread(() -> result.set(DataPathWarmup.run(dir, new ShmSettings(tmp, 200), 8, 10_000_000,
                new TestHooks(), false)), "warm-up-runner");
        runner.setDaemon(true);
        try {
            runner.start();
            Thread echo = awaitThread("sora-warmup-echo", runner);
            shm.abortWarmUp();
            runner.join(10_000);
            echo.join(10_000);
            assertTrue(!runner.isAlive() && !echo.isAlive(), "the warm-up's threads still run after the abort");
            assertEquals(Boolean.FALSE, result.get(), "an aborted warm-up reports that it did not finish");
            assertTrue(!shm.warmDataPath(8, new TestHooks(), false), "a warm-up begun after the abort does not run");
        } finally {
            DataPathWarmup.allowAgain();
        }
    }

    /** The live thread named {@code name}, once there (bounded by the test's timeout; fails if {@code runner} ends first). */
    private static Thread awaitThread(String name, Thread runner) throws InterruptedException {
        while (true) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(name) && t.isAlive()) return t;
            }
            if (!runner.isAlive()) throw new AssertionError("the warm-up ended before its echo thread started");
            Thread.sleep(1); // polling for the thread to exist, not waiting in its stead
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // it parked for good
    void withoutFutexesItEnds() throws Exception {
        // doorbell mode (sora.futex.disabled, or no libsora): the warm-up's connection has no channel, so
        // its threaded parts, whose sleepers only a doorbell would wake, are skipped; they parked for good
        ShmTransport shm = new ShmTransport(new ShmSettings(tmp, 200, false), Tracer.OFF);
        assertTrue(shm.availability().isAvailable(), "shm available in " + tmp);
        assertTrue(shm.warmDataPath(600, new TestHooks(), false), "the warm-up failed");
    }
}
