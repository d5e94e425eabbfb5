package io.sora.examples.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The driver's command line. Unset figures take the full-run defaults, or the {@code --quick} ones.
 * Immutable after {@link #parse}.
 */
final class BenchOptions {
    static final String USAGE = String.join("\n",
            "usage: Bench [--agent sora-agent.jar] [--agent-options OPTS] [--quick] [--size N] [--iterations N]",
            "             [--reps N] [--warmup N] [--stream-mib N] [--stream-reps N] [--paths tcp,tcp+agent,shm,floor]",
            "             [--placements split,same] [--java PATH] [--jvm-arg ARG]... [--rule-options OPTS]",
            "             [--timeout SECONDS] [--out FILE.md] [--verbose]",
            "  --agent          the sora agent jar; without it the tcp+agent and shm rows are skipped",
            "  --agent-options  appended to the agent argument after conf=FILE, e.g. trace=iprint=NET",
            "  --quick          a smoke run (fewer iterations, 64 MiB streams), well under a minute",
            "  --size           ping-pong message size in bytes (default 4096)",
            "  --iterations     timed round trips per repetition (default 2000; quick 500)",
            "  --reps           repetitions (default 5; quick 3); each reports its median, the table their median",
            "  --warmup         untimed round trips first (default 5000; quick 500)",
            "  --stream-mib     MiB streamed per repetition in 64 KiB writes, 0 = no stream (default 1024; quick 64)",
            "  --stream-reps    streaming repetitions (default 5; quick 3)",
            "  --paths          which rows to run (default all)",
            "  --placements     split (two CPUs), same (one CPU); default both",
            "  --java           the java executable the children run on (default: the driver's)",
            "  --jvm-arg        an extra JVM option for every child (repeatable), e.g. -Dsora.spin.iterations=2000",
            "  --rule-options   key=value options appended to both shm rules (default \"wait=2s\"; \"\" for none)",
            "  --timeout        seconds one client child may run before it is killed (default 180; quick 60)",
            "  --out            also write the header and tables as Markdown to this file",
            "  --verbose        print each child's command line");

    Path agent;
    /** Appended to the agent argument after {@code conf=FILE}, e.g. {@code trace=iprint=NET}. */
    String agentOptions;
    boolean quick;
    int size = 4096;
    Integer iterations;
    Integer reps;
    Integer warmup;
    Integer streamMib;
    Integer streamReps;
    int streamChunk = 64 * 1024;
    Integer timeoutSeconds;
    Path out;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Set<Route> routes = EnumSet.allOf(Route.class);
    List<String> placements = List.of("split", "same");
    /**
     * Options appended to both rules. The pairing wait is raised from JSOR's 100 ms because the
     * benchmark measures the data path, not set-up: on a loaded machine a freshly started JVM can
     * miss 100 ms and fall back to TCP, which would abort the run.
     */
    String ruleOptions = "wait=2s";
    /** Extra JVM options for every child, e.g. {@code -Dsora.spin.iterations=2000}. */
    final List<String> jvmArgs = new ArrayList<>();
    boolean verbose;
    boolean help;
    final List<String> args = new ArrayList<>();

    private BenchOptions() {
    }

    static BenchOptions parse(String[] argv) {
        BenchOptions o = new BenchOptions();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            o.args.add(a);
            String key = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                key = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            switch (key) {
                case "--quick" -> o.quick = true;
                case "--verbose" -> o.verbose = true;
                case "--help", "-h" -> o.help = true;
                default -> {
                    if (value == null) {
                        if (i + 1 >= argv.length) {
                            throw new IllegalArgumentException("option " + a + " needs a value\n" + USAGE);
                        }
                        value = argv[++i];
                        o.args.add(value);
                    }
                    o.set(key, value);
                }
            }
        }
        o.applyDefaults();
        return o;
    }

    private void set(String key, String value) {
        switch (key) {
            case "--agent" -> agent = Path.of(value);
            case "--agent-options" -> agentOptions = value;
            case "--jvm-arg" -> jvmArgs.add(value);
            case "--rule-options" -> ruleOptions = value.trim();
            case "--size" -> size = positive(key, value);
            case "--iterations" -> iterations = positive(key, value);
            case "--reps" -> reps = positive(key, value);
            case "--warmup" -> warmup = nonNegative(key, value);
            case "--stream-mib" -> streamMib = nonNegative(key, value);
            case "--stream-reps" -> streamReps = positive(key, value);
            case "--timeout" -> timeoutSeconds = positive(key, value);
            case "--out" -> out = Path.of(value);
            case "--java" -> java = value;
            case "--paths" -> {
                routes = EnumSet.noneOf(Route.class);
                for (String p : value.split(",")) {
                    routes.add(Route.byLabel(p.trim()));
                }
            }
            case "--placements" -> {
                placements = new ArrayList<>();
                for (String p : value.split(",")) {
                    if (!p.equals("split") && !p.equals("same")) {
                        throw new IllegalArgumentException("--placements: '" + p + "' is neither split nor same");
                    }
                    placements.add(p);
                }
            }
            default -> throw new IllegalArgumentException("unknown option '" + key + "'\n" + USAGE);
        }
    }

    private void applyDefaults() {
        if (size < Wire.MIN_SIZE) {
            throw new IllegalArgumentException("--size " + size + " must be at least " + Wire.MIN_SIZE);
        }
        iterations = iterations != null ? iterations : quick ? 500 : 2000;
        reps = reps != null ? reps : quick ? 3 : 5;
        warmup = warmup != null ? warmup : quick ? 500 : 5000;
        streamMib = streamMib != null ? streamMib : quick ? 64 : 1024;
        streamReps = streamReps != null ? streamReps : quick ? 3 : 5;
        timeoutSeconds = timeoutSeconds != null ? timeoutSeconds : quick ? 60 : 180;
        if ((long) iterations * reps > 50_000_000L) {
            throw new IllegalArgumentException("--iterations " + iterations + " x --reps " + reps + " exceeds 50,000,000 samples");
        }
    }

    long streamBytes() {
        return streamMib * 1024L * 1024L;
    }

    private static int positive(String key, String value) {
        int v = nonNegative(key, value);
        if (v == 0) {
            throw new IllegalArgumentException(key + " " + value + " must be at least 1");
        }
        return v;
    }

    private static int nonNegative(String key, String value) {
        try {
            int v = Integer.parseInt(value);
            if (v < 0) {
                throw new IllegalArgumentException(key + " " + value + " must not be negative");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " '" + value + "' is not a whole number", e);
        }
    }
}
