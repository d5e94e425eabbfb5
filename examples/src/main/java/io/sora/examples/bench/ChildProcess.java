package io.sora.examples.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One forked child JVM of the benchmark, its stdout and stderr captured in files (no pump threads,
 * nothing to deadlock on a full pipe). Every wait is bounded by a deadline; a child that misses it
 * is killed and its output reported. Used by the driver's thread only.
 */
final class ChildProcess {
    /** A child that failed: the message carries its command, exit status, stdout and stderr. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    private final String name;
    private final List<String> command;
    private final Path stdout;
    private final Path stderr;
    private final Process process;

    private ChildProcess(String name, List<String> command, Path stdout, Path stderr, Process process) {
        this.name = name;
        this.command = command;
        this.stdout = stdout;
        this.stderr = stderr;
        this.process = process;
    }

    /** The child's process id. */
    long pid() {
        return process.pid();
    }

    static ChildProcess start(String name, List<String> command, Path dir) {
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            p.getOutputStream().close();
            return new ChildProcess(name, command, out, err, p);
        } catch (IOException e) {
            throw new Failure(name + ": cannot start " + String.join(" ", command) + ": " + e.getMessage());
        }
    }

    /** Waits until stdout holds a line starting with {@code prefix}; fails if the child exits or the deadline passes. */
    void awaitLine(String prefix, long deadlineNanos) {
        while (true) {
            for (String line : read(stdout).split("\n")) {
                if (line.startsWith(prefix)) {
                    return;
                }
            }
            if (!process.isAlive()) {
                throw failure("exited with status " + process.exitValue() + " before printing " + prefix);
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                kill();
                throw failure("printed no " + prefix + " line in time; killed");
            }
            sleep(20);
        }
    }

    /** Waits for a zero exit status within the deadline; kills the child and fails otherwise. */
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
            throw failure("interrupted while waiting; killed");
        }
        if (process.exitValue() != 0) {
            throw failure("exited with status " + process.exitValue());
        }
    }

    /** Fails if the child's stderr contains {@code marker} (the agent's error lines, for instance). */
    void checkStderrFree(String marker) {
        if (read(stderr).contains(marker)) {
            throw failure("reported '" + marker + "' on stderr, so its figures would not measure the intended path");
        }
    }

    /** The {@code key=value} pairs of the child's {@code RESULT} line; fails if there is none. */
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

    /** The first stdout line starting with {@code prefix}, or null; for children that print no RESULT line. */
    String stdoutLine(String prefix) {
        for (String line : read(stdout).split("\n")) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return null;
    }

    /**
     * Kills the child and any process it started (a child run under {@code timeout} is the JVM's
     * parent); a JVM child's watchdog also ends it when the driver disappears.
     */
    void kill() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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
        return s.isEmpty() ? "  (empty)" : "  " + s.strip().replace("\n", "\n  ");
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted");
        }
    }
}
