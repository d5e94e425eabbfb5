package io.sora.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether this JVM's JIT compiler threads are at work, read from Linux's {@code /proc/self/task}:
 * the threads HotSpot names {@code C1 CompilerThread<n>} and {@code C2 CompilerThread<n>}, and
 * whether any of them is running or runnable ({@code R}). Used once at start-up, off the
 * application's threads, to let the compilations that the data-path warm-up queued finish before the
 * application's first round trips (a compiler thread that wakes on the CPU an application thread is
 * using takes it for a scheduler time slice).
 *
 * <p>Deliberately not {@code java.lang.management}: creating its compilation bean initialises the
 * platform component registry, which loads {@code java.util.logging.LogManager} before applications
 * that choose their own log manager have set it. Elsewhere than Linux this knows nothing and says so.
 */
final class CompilerActivity {
    private static final Path TASKS = Path.of("/proc/self/task");

    private CompilerActivity() {
    }

    /**
     * Returns once no compiler thread has been running at {@code polls} polls in a row,
     * {@code pollMillis} apart, or at {@code deadline} ({@link System#nanoTime}).
     *
     * @return true if the compilers went quiet; false at the deadline, if interrupted, or where
     *         their threads cannot be seen
     */
    static boolean awaitQuiet(long deadline, int polls, long pollMillis) {
        List<Path> compilers = compilerThreads();
        if (compilers.isEmpty()) return false;
        int quiet = 0;
        while (quiet < polls) {
            long left = deadline - System.nanoTime();
            if (left <= 0) return false;
            try {
                Thread.sleep(Math.max(1, Math.min(pollMillis, left / 1_000_000L)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            quiet = anyRunning(compilers) ? 0 : quiet + 1;
        }
        return true;
    }

    /** The {@code stat} files of this JVM's compiler threads; empty where they cannot be read. */
    static List<Path> compilerThreads() {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String comm = read(task.resolve("comm"));
                // the kernel keeps 15 characters of the name: "C2 CompilerThre"
                if (comm != null && (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre"))) {
                    out.add(task.resolve("stat"));
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        return out;
    }

    /** Whether any of those threads is in state R; a thread that ended counts as not running. */
    static boolean anyRunning(List<Path> stats) {
        for (Path stat : stats) {
            String s = read(stat);
            if (s == null) continue;
            // "tid (comm) S ...": the name may hold spaces and parentheses, the state follows the last ')'
            int close = s.lastIndexOf(')');
            if (close > 0 && close + 2 < s.length() && s.charAt(close + 2) == 'R') return true;
        }
        return false;
    }

    private static String read(Path p) {
        try {
            return new String(Files.readAllBytes(p), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
