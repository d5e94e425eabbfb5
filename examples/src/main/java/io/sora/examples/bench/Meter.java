package io.sora.examples.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads this process's CPU time and the calling thread's allocated bytes, the two costs the
 * benchmark reports per byte and per message; both return -1 where they are unavailable.
 * The allocation reader does not allocate, so it can bracket a timed loop; the CPU reader does
 * (it reads {@code /proc}), so callers read CPU outside the allocation brackets:
 * {@code cpu0, alloc0, loop, alloc1, cpuSince(cpu0)}. {@link #prime()} once before the first measurement:
 * the management beans allocate when first used. Thread-safe (stateless after class initialisation).
 */
final class Meter {
    private static final com.sun.management.ThreadMXBean THREADS = threads();
    private static final Path TASKS = Path.of("/proc/self/task");

    private Meter() {
    }

    /** Loads and exercises both beans, so that later readings measure only the code between them. */
    static void prime() {
        for (int i = 0; i < 3; i++) {
            cpuSince(cpu());
            allocatedBytes();
        }
    }

    /**
     * A reading of the process's CPU time, for {@link #cpuSince}: per thread (the JVM's own GC and
     * JIT threads included), user + system, from {@code /proc/self/task/*}{@code /schedstat}, in
     * nanoseconds; {@code getProcessCpuTime} counts 10 ms clock ticks, too coarse for a repetition
     * of a quarter of a second. Null where {@code /proc} is unavailable. Allocates.
     */
    static long[] cpu() {
        List<long[]> threads = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path t : tasks) {
                try {
                    String s = Files.readString(t.resolve("schedstat"));
                    int end = s.indexOf(' ');
                    threads.add(new long[] {Long.parseLong(t.getFileName().toString()),
                        Long.parseLong(end < 0 ? s.trim() : s.substring(0, end))});
                } catch (IOException | NumberFormatException e) {
                    // the thread ended while we looked
                }
            }
        } catch (IOException e) {
            return null;
        }
        long[] flat = new long[threads.size() * 2];
        for (int i = 0; i < threads.size(); i++) {
            flat[2 * i] = threads.get(i)[0];
            flat[2 * i + 1] = threads.get(i)[1];
        }
        return flat;
    }

    /**
     * CPU nanoseconds the process used since {@code before} ({@link #cpu}), -1 if unknown. Summed per
     * thread, so a thread that ended in between (HotSpot stops idle JIT compiler threads) cannot make
     * it negative; what such a thread used after {@code before} is lost, and a thread that started in
     * between counts in full.
     */
    static long cpuSince(long[] before) {
        long[] after = cpu();
        if (before == null || after == null) {
            return -1;
        }
        Map<Long, Long> was = new HashMap<>();
        for (int i = 0; i < before.length; i += 2) {
            was.put(before[i], before[i + 1]);
        }
        long sum = 0;
        for (int i = 0; i < after.length; i += 2) {
            sum += Math.max(0, after[i + 1] - was.getOrDefault(after[i], 0L));
        }
        return sum;
    }

    /** Bytes the calling thread allocated on the heap since it started; -1 if unknown. */
    static long allocatedBytes() {
        return THREADS == null ? -1 : THREADS.getCurrentThreadAllocatedBytes();
    }

    /** {@code after - before}, or -1 when either reading was unavailable. */
    static long delta(long before, long after) {
        return before < 0 || after < 0 ? -1 : after - before;
    }

    private static com.sun.management.ThreadMXBean threads() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported()) {
            t.setThreadAllocatedMemoryEnabled(true);
            return t;
        }
        return null;
    }
}
