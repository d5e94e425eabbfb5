package io.sora.transport;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a thread is asleep rather than running or spinning, for diagnostics and tests. A parked
 * thread shows {@link Thread.State#WAITING}; a thread asleep in the kernel on the shm path (a futex,
 * entered through native code) shows {@link Thread.State#RUNNABLE} to Java, so for it the kernel's own
 * view is read: the task of this process whose name ({@code /proc/self/task/N/comm}, the thread's
 * name cut to 15 bytes, as the JVM sets it) is the thread's, in state {@code S}.
 */
public final class ThreadStates {
    private ThreadStates() {
    }

    /**
     * True when {@code t} is parked or sleeping in the kernel. For a {@code RUNNABLE} thread the answer
     * needs a unique thread name of 15 characters or fewer; otherwise it is false.
     */
    public static boolean isAsleep(Thread t) {
        Thread.State s = t.getState();
        if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) return true;
        if (s != Thread.State.RUNNABLE) return false;
        return kernelState(t.getName()) == 'S';
    }

    /** The kernel's state letter of this process's only task named {@code name}, or 0 if none or several. */
    static char kernelState(String name) {
        String comm = name.length() > 15 ? name.substring(0, 15) : name;
        Path found = null;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String c;
                try {
                    c = Files.readString(task.resolve("comm")).strip();
                } catch (IOException e) {
                    continue; // the task ended meanwhile
                }
                if (c.equals(comm)) {
                    if (found != null) return 0;
                    found = task;
                }
            }
            if (found == null) return 0;
            String stat = Files.readString(found.resolve("stat"));
            int close = stat.lastIndexOf(')'); // the name field may hold spaces and parentheses
            return close < 0 || close + 2 >= stat.length() ? 0 : stat.charAt(close + 2);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
