package io.sora.examples.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The agent's start-up cost: wall time from starting a JVM running {@link Hello} to its exit, with and
 * without {@code -javaagent} (rules that match nothing), alternating so that drift in machine load
 * hits both equally. One untimed run of each first (page cache). Unpinned: start-up is
 * multi-threaded (JIT, GC) and the question is what a user waits for. Used by the driver's thread.
 */
final class Startup {
    /** Medians and spreads of the runs, nanoseconds. */
    record Result(int runs, long withoutMedian, long withoutMin, long withoutMax, long withMedian, long withMin, long withMax) {
        long addedNanos() {
            return withMedian - withoutMedian;
        }
    }

    private Startup() {
    }

    /**
     * Times {@code runs} start-ups of each kind.
     *
     * @param agentArg the {@code -javaagent:...} option, null to measure without agent only
     * @throws ChildProcess.Failure if a run fails or exceeds 60 s
     */
    static Result measure(String java, List<String> jvmArgs, String agentArg, int runs) {
        List<Long> without = new ArrayList<>();
        List<Long> with = new ArrayList<>();
        for (int i = 0; i <= runs; i++) {
            long a = once(java, jvmArgs, null);
            long b = agentArg == null ? 0 : once(java, jvmArgs, agentArg);
            if (i > 0) { // the first pair only warms the page cache
                without.add(a);
                with.add(b);
            }
        }
        without.sort(null);
        with.sort(null);
        return new Result(runs, median(without), without.get(0), without.get(runs - 1),
                median(with), with.get(0), with.get(runs - 1));
    }

    private static long once(String java, List<String> jvmArgs, String agentArg) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmArgs);
        if (agentArg != null) {
            cmd.add(agentArg);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Hello.class.getName()));
        Path out = null;
        try {
            out = Files.createTempFile("sora-bench-hello-", ".txt");
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new ChildProcess.Failure("start-up run did not finish in 60 s: " + String.join(" ", cmd));
            }
            long nanos = System.nanoTime() - t0;
            String text = Files.readString(out);
            if (p.exitValue() != 0 || !text.startsWith("hello") || text.contains("[sora] ERROR")) {
                throw new ChildProcess.Failure("start-up run failed (status " + p.exitValue() + "): "
                        + String.join(" ", cmd) + "\n" + text);
            }
            return nanos;
        } catch (IOException e) {
            throw new ChildProcess.Failure("start-up run: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ChildProcess.Failure("start-up run interrupted");
        } finally {
            if (out != null) {
                out.toFile().delete();
            }
        }
    }

    private static long median(List<Long> sorted) {
        return sorted.get((sorted.size() - 1) / 2);
    }
}
