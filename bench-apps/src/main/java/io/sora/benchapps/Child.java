package io.sora.benchapps;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One child JVM, stdout and stderr in files (no pump threads). Every wait has a deadline; a child
 * that misses it is killed. Every live child is killed by a shutdown hook when the driver exits.
 */
final class Child {
    /** A failed child; the message carries its command and output. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Process p : LIVE) {
                p.destroyForcibly();
            }
        }, "bench-apps-kill-children"));
    }

    final String name;
    private final List<String> command;
    final Path stdout;
    final Path stderr;
    private final Process process;

    private Child(String name, List<String> command, Path stdout, Path stderr, Process process) {
        this.name = name;
        this.command = command;
        this.stdout = stdout;
        this.stderr = stderr;
        this.process = process;
    }

    /** Starts the child; its stdin stays open when {@code keepStdin} (the server's stop channel). */
    static Child start(String name, List<String> command, Path dir, boolean keepStdin) {
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            LIVE.add(p);
            if (!keepStdin) {
                p.getOutputStream().close();
            }
            return new Child(name, command, out, err, p);
        } catch (IOException e) {
            throw new Failure(name + ": cannot start " + String.join(" ", command) + ": " + e.getMessage());
        }
    }

    /** Waits for a stdout line starting with {@code prefix}; fails if the child exits first or the deadline passes. */
    void awaitLine(String prefix, long deadlineNanos) {
        while (true) {
            for (String line : read(stdout).split("\n")) {
                if (line.startsWith(prefix)) {
                    return;
                }
            }
            if (!process.isAlive()) {
                LIVE.remove(process);
                throw failure("exited with status " + process.exitValue() + " before printing " + prefix);
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                kill();
                throw failure("printed no " + prefix + " line in time; killed");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                kill();
                Thread.currentThread().interrupt();
                throw failure("interrupted; killed");
            }
        }
    }

    /** Writes one line to the child's stdin and closes it. */
    void tell(String line) {
        try (OutputStream o = process.getOutputStream()) {
            o.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the child is gone already; awaitExit reports how it ended
        }
    }

    /** Waits for exit status 0 within the deadline; kills the child and fails otherwise. */
    void awaitExit(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        try {
            if (left <= 0 || !process.waitFor(left, TimeUnit.NANOSECONDS)) {
                kill();
                throw failure("did not finish in time; killed");
            }
        } catch (InterruptedException e) {
            kill();
            Thread.currentThread().interrupt();
            throw failure("interrupted; killed");
        }
        LIVE.remove(process);
        if (process.exitValue() != 0) {
            throw failure("exited with status " + process.exitValue());
        }
    }

    void kill() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LIVE.remove(process);
    }

    /** The key=value pairs of the {@code RESULT} line. */
    Map<String, String> result() {
        for (String line : read(stdout).split("\n")) {
            if (line.startsWith("RESULT ")) {
                Map<String, String> m = new LinkedHashMap<>();
                for (String word : line.substring(7).trim().split("\\s+")) {
                    int eq = word.indexOf('=');
                    if (eq > 0) {
                        m.put(word.substring(0, eq), word.substring(eq + 1));
                    }
                }
                return m;
            }
        }
        throw failure("printed no RESULT line");
    }

    boolean stderrContains(String marker) {
        return read(stderr).contains(marker);
    }

    String command() {
        return String.join(" ", command);
    }

    Failure failure(String what) {
        return new Failure(name + " " + what + "\n  command: " + command()
                + "\n  --- stdout (" + stdout + ")\n" + indent(read(stdout))
                + "\n  --- stderr (" + stderr + ")\n" + indent(read(stderr)));
    }

    private static String indent(String s) {
        String t = s.strip();
        if (t.length() > 6000) {
            t = "...\n" + t.substring(t.length() - 6000);
        }
        return t.isEmpty() ? "  (empty)" : "  " + t.replace("\n", "\n  ");
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
