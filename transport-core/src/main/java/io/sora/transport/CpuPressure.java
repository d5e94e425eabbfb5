package io.sora.transport;

import java.io.IOException;
import java.io.RandomAccessFile;

/**
 * Whether the machine's CPUs are all taken right now: more threads runnable than CPUs online, read
 * from the kernel's count of running threads ({@code /proc/loadavg}, its fourth field), at most once
 * per {@value #PERIOD_NANOS} ns for the whole JVM, by a thread that is waiting anyway.
 *
 * <p>Why a waiting policy needs it: a reader that spins or yields holds a CPU. On a machine with an
 * idle CPU that costs nobody anything and catches the peer's answer in place. On a machine where
 * every CPU is wanted (cold JVMs whose JIT compiler threads take the CPUs for seconds, a database's
 * own threads, a busy host) the spinner takes a CPU from a thread that has work, often the very peer
 * whose answer it waits for: measured with H2's server and client (both attached, unpinned, 2 CPUs,
 * 50,000 point queries from cold JVMs) the client's thread spent 0.8 s runnable but not running
 * against 0.14 s over TCP, and the run had twice TCP's queries of 2-4 ms (a scheduler tick: a peer
 * queued behind a compiler thread). Sleeping at once there hands the CPU to whoever has work, as a
 * blocking TCP read does.
 */
public final class CpuPressure {
    static final long PERIOD_NANOS = 1_000_000;
    /** {@code -Dsora.wait.pressure=false}: never consult it (spin by the other rules only), for measurements. */
    static final boolean ENABLED = !"false".equals(System.getProperty("sora.wait.pressure"));
    private static final int CPUS = onlineCpus();
    /** 1 while a thread reads; an AtomicInteger, whose compare-and-set is one Unsafe call interpreted (a VarHandle's, AtomicBoolean's, a dozen). */
    private static final java.util.concurrent.atomic.AtomicInteger READING = new java.util.concurrent.atomic.AtomicInteger();
    private static final byte[] BUF = new byte[128];
    private static RandomAccessFile loadavg;
    private static volatile long readAt = Long.MIN_VALUE / 2;
    private static volatile boolean crowded;
    private static volatile boolean broken = !ENABLED;
    /** While set ({@link #exercise}), each wait finds the machine crowded or not in turn. */
    private static volatile boolean exercising;
    private static int exerciseTurn;

    private CpuPressure() {
    }

    /**
     * True if, at the last reading (at most about a millisecond old), more threads were runnable than CPUs.
     * Public for waits outside this package (a pairing's, {@code NextPairing}).
     */
    public static boolean crowded(long nowNanos) {
        if (exercising) return (++exerciseTurn & 1) == 0;
        if (broken) return false;
        if (nowNanos - readAt < PERIOD_NANOS || !READING.compareAndSet(0, 1)) return crowded;
        try {
            readAt = nowNanos;
            int running = readRunning();
            if (running < 0) {
                broken = true;
                return crowded = false;
            }
            return crowded = running > CPUS;
        } finally {
            READING.set(0);
        }
    }

    /**
     * For the data path's warm-up: while on, waits find the machine crowded and not crowded in turn,
     * whatever its load, so that the waiting code's profile has seen both. A branch the warm-up never
     * took is compiled as a trap: a warm-up that ran while the JIT kept the machine crowded, and an
     * application whose first waits found it quiet, had the compiled wait deoptimised and compiled
     * again at the application's first messages ({@code -XX:+LogCompilation}: {@code unstable_if} in
     * {@code AdaptiveWait.idle}). Harmless to an application's waits meanwhile: a policy choice.
     */
    public static void exercise(boolean on) {
        exercising = on;
    }

    /**
     * For the data path's warm-up (with {@link #exercise} off): one reading that finds another thread
     * reading, as waits of many connections do; the answer is the last reading's. A branch the warm-up
     * never took, compiled as a trap into the wait: the nio row's 16-connection client deoptimised its
     * compiled read there (-XX:+LogCompilation, 2026-11-28).
     */
    static void exerciseBusyReader() {
        if (!READING.compareAndSet(0, 1)) return; // someone is reading: that is the case itself
        try {
            crowded(readAt + PERIOD_NANOS);
        } finally {
            READING.set(0);
        }
    }

    /** Whether {@link #exercise} is on. */
    static boolean exercising() {
        return exercising;
    }

    /** The number of runnable threads the kernel counts now (this one included), -1 if unreadable. */
    private static int readRunning() {
        try {
            if (loadavg == null) loadavg = new RandomAccessFile("/proc/loadavg", "r");
            loadavg.seek(0);
            int n = loadavg.read(BUF, 0, BUF.length);
            return parseRunning(BUF, n);
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /** The {@code R} of {@code "0.10 0.20 0.30 R/T PID"}, or -1. */
    static int parseRunning(byte[] b, int n) {
        int field = 0;
        int i = 0;
        while (i < n && field < 3) {
            if (b[i++] == ' ') field++;
        }
        int v = 0;
        int digits = 0;
        while (i < n && b[i] >= '0' && b[i] <= '9') {
            v = v * 10 + (b[i++] - '0');
            digits++;
        }
        return digits > 0 && i < n && b[i] == '/' ? v : -1;
    }

    /** CPUs online on the host (not this JVM's share: the count the kernel's running figure is over). */
    private static int onlineCpus() {
        try {
            String s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/sys/devices/system/cpu/online")),
                    java.nio.charset.StandardCharsets.US_ASCII).trim();
            int count = 0;
            for (String range : s.split(",")) {
                int dash = range.indexOf('-');
                count += dash < 0 ? 1 : Integer.parseInt(range.substring(dash + 1)) - Integer.parseInt(range.substring(0, dash)) + 1;
            }
            return Math.max(1, count);
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }
}
