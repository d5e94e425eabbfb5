package io.sora.examples.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The field benchmark's command line ({@link FieldBench}). Immutable after {@link #parse}; bad input
 * is an {@link IllegalArgumentException} whose message names the option (the driver exits 2).
 */
final class FieldOptions {
    /** The rows, in the order they run and print. */
    static final List<String> ROWS = List.of("pp4k", "sample-cold", "think", "conns", "hog", "setup", "nio");
    static final List<String> PLACEMENTS = List.of("unpinned", "split", "same");

    static final String USAGE = String.join("\n",
            "usage: FieldBench --agent sora-agent.jar [--quick] [--pairs N] [--rows LIST] [--placements LIST] [option...]",
            "  --agent        the sora agent jar (required: every row compares tcp with shm)",
            "  --java         the java executable the children run on (default: the driver's)",
            "  --quick        fewer round trips and 2 pairs: a smoke run",
            "  --pairs        tcp,shm alternations per row and setting (default 5; quick 2)",
            "  --rows         any of " + String.join(",", ROWS) + " (default all)",
            "  --placements   any of unpinned,split,same (default all; each row runs those it defines)",
            "  --report       directory for field.md and field.json (default target/bench-report)",
            "  --rule-options key=value options appended to the shm rules of every row but sample-cold",
            "                 (default \"wait=2s\"; \"\" for none)",
            "  --timeout      seconds one client child may run before it is killed (default 120)",
            "  --jvm-arg      an extra JVM option for every child (repeatable)",
            "  --setup-connections  connections per run of the setup row (default 300, quick 100; thousands",
            "                 measure set-up once the JIT compiled it)",
            "  --verbose      print each child's command line");

    Path agent;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    boolean quick;
    Integer pairs;
    Set<String> rows = new LinkedHashSet<>(ROWS);
    Set<String> placements = new LinkedHashSet<>(PLACEMENTS);
    Path report = Path.of("target", "bench-report");
    /** 0: the default of {@link #setupConnections()}. */
    int setupConnections;
    String ruleOptions = "wait=2s";
    int timeoutSeconds = 120;
    final List<String> jvmArgs = new ArrayList<>();
    boolean verbose;
    boolean help;
    final List<String> args = new ArrayList<>();

    private FieldOptions() {
    }

    static FieldOptions parse(String[] argv) {
        FieldOptions o = new FieldOptions();
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
        if (o.pairs == null) {
            o.pairs = o.quick ? 2 : 5;
        }
        if (!o.help && o.agent == null) {
            throw new IllegalArgumentException("--agent sora-agent.jar is required: every row compares tcp with shm\n" + USAGE);
        }
        return o;
    }

    private void set(String key, String value) {
        switch (key) {
            case "--agent" -> agent = Path.of(value);
            case "--java" -> java = value;
            case "--pairs" -> pairs = bounded(key, value, 1, 100);
            case "--rows" -> rows = subset(key, value, ROWS);
            case "--placements" -> placements = subset(key, value, PLACEMENTS);
            case "--report" -> report = Path.of(value);
            case "--rule-options" -> ruleOptions = value.trim();
            case "--timeout" -> timeoutSeconds = bounded(key, value, 1, 3600);
            case "--setup-connections" -> setupConnections = bounded(key, value, 1, 100_000);
            case "--jvm-arg" -> jvmArgs.add(value);
            default -> throw new IllegalArgumentException("unknown option '" + key + "'\n" + USAGE);
        }
    }

    /** Round trips of one pp4k run. */
    int pp4kRoundTrips() {
        return quick ? 5_000 : 20_000;
    }

    /** Round trips of one think run (per think time). */
    int thinkRoundTrips() {
        return quick ? 1_000 : 5_000;
    }

    /** Round trips of one conns run, split evenly across its connections. */
    int connsRoundTrips() {
        return quick ? 4_000 : 20_000;
    }

    /** Connections of one setup run: {@code --setup-connections}, else 300 (100 with --quick): a cold JVM's first ones. */
    int setupConnections() {
        return setupConnections > 0 ? setupConnections : quick ? 100 : 300;
    }

    /** Round trips of one hog run. */
    int hogRoundTrips() {
        return quick ? 2_500 : 10_000;
    }

    /** A comma-separated list of known names, in the order given, without duplicates; empty is an error. */
    static Set<String> subset(String key, String value, List<String> known) {
        Set<String> out = new LinkedHashSet<>();
        for (String p : value.split(",")) {
            String t = p.trim();
            if (t.isEmpty()) {
                continue;
            }
            if (!known.contains(t)) {
                throw new IllegalArgumentException(key + ": unknown '" + t + "' (known: " + String.join(",", known) + ")");
            }
            out.add(t);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(key + " names nothing (known: " + String.join(",", known) + ")");
        }
        return out;
    }

    private static int bounded(String key, String value, int min, int max) {
        try {
            int v = Integer.parseInt(value.trim());
            if (v < min || v > max) {
                throw new IllegalArgumentException(key + " " + value + " must be between " + min + " and " + max);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " '" + value + "' is not a whole number", e);
        }
    }
}
