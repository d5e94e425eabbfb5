package io.sora.it.reliability.apps;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What the reliability apps share: the agent's path of a socket, process metrics, bounded waits. */
final class Apps {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private Apps() {
    }

    /** "shm", "tcp" or "rdma" from the agent's bootstrap bridge; "tcp" without the agent. */
    static String path(Socket s) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            return (String) bridge.getMethod("pathOf", Socket.class).invoke(null, s);
        } catch (ReflectiveOperationException e) {
            return "tcp";
        }
    }

    static void readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int n = in.read(b, off, len);
            if (n < 0) throw new IOException("EOF with " + len + " bytes still expected");
            off += n;
            len -= n;
        }
    }

    /**
     * Waits (bounded) until {@code t} is parked or sleeping inside a method named {@code method} (a socket
     * stream's read or write): blocked on the fast path, not spinning, and not asleep elsewhere (a thread
     * loading a class before its write sleeps too: CI saw a test's peer close before the write began).
     */
    static boolean awaitParked(Thread t, String method, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < deadline) {
            Thread.State s = t.getState();
            if (!java.util.Arrays.stream(t.getStackTrace()).anyMatch(e -> e.getMethodName().equals(method))) {
                if (s == Thread.State.TERMINATED) return false;
                Thread.sleep(5);
                continue;
            }
            if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) return true;
            if (s == Thread.State.TERMINATED) return false;
            if (s == Thread.State.RUNNABLE && kernelState(t.getName()) == 'S') return true; // in a futex
            Thread.sleep(5);
        }
        return false;
    }

    /**
     * The kernel's state letter of this process's task named {@code name} (its thread name, which the
     * JVM gives the task, cut to 15 bytes), or 0. An application cannot see sora's classes, so this
     * reads /proc itself: a thread asleep in a futex is RUNNABLE to Java but 'S' to the kernel.
     */
    static char kernelState(String name) {
        String comm = name.length() > 15 ? name.substring(0, 15) : name;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (!Files.readString(task.resolve("comm")).strip().equals(comm)) continue;
                    String stat = Files.readString(task.resolve("stat"));
                    int close = stat.lastIndexOf(')');
                    return close < 0 || close + 2 >= stat.length() ? 0 : stat.charAt(close + 2);
                } catch (IOException e) {
                    // the task ended meanwhile
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return 0;
    }

    static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    /** Files in {@code dir} whose name starts with {@code prefix}. */
    static long count(Path dir, String prefix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().startsWith(prefix)).count();
        }
    }

    /** Lines of /proc/self/maps that name a file under {@code dir}. */
    static java.util.List<String> mapsUnder(Path dir) throws IOException {
        String prefix = dir.toString() + "/";
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains(prefix)).toList();
    }
}
