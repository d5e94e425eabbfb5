package io.sora.benchapps;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The driver's command line. */
final class Options {
    static final List<String> APPS = List.of("h2", "derby", "netty", "http");
    static final List<String> PLACEMENTS = List.of("unpinned", "same");

    String agent;
    boolean quick;
    int pairs = -1;
    List<String> apps = APPS;
    /** Null until parsed: unpinned and both JVMs on one CPU, or unpinned alone for --quick. */
    List<String> placements;
    int rows = 1000;
    int queries = 10_000;
    int warmup = -1;
    long seed = 42;
    String ruleOptions = "wait=2s";
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> jvmArgs = new ArrayList<>();
    int timeoutSeconds = 120;
    Path report = Path.of("target", "bench-report");
    boolean verbose;
    boolean keep;

    static final String USAGE = """
            usage: AppBench --agent JAR [options]
              --agent JAR          the sora agent jar (the shm path attaches it to both JVMs)
              --quick              smoke run: 2 pairs, 1000 warm-up queries
              --pairs N            tcp/shm pairs per app and placement (5; --quick 2)
              --apps LIST          any of h2,derby,netty,http (all four)
              --placements LIST    any of unpinned,same (both; --quick unpinned); same = both JVMs on 'taskset -c 0'
              --rows N             rows in the table (1000)
              --queries N          timed point queries per run (10000)
              --warmup N           untimed point queries before them (2000; --quick 1000)
              --seed N             seed of the query ids (42)
              --rule-options OPTS  options appended to both shm rules (wait=2s; "" for none)
              --java PATH          the java the children run on (the driver's)
              --jvm-arg ARG        an extra JVM option for every child, repeatable
              --timeout S          bound on one client child (120); servers get more
              --report DIR         where apps.md and apps.json go (target/bench-report)
              --no-report          console only
              --verbose            print every child's command line
              --keep               keep the work directory (outputs, rule files, traces) after a run that passed
            """;

    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--agent" -> o.agent = value(args, ++i, a);
                case "--quick" -> o.quick = true;
                case "--pairs" -> o.pairs = positive(value(args, ++i, a), a);
                case "--apps" -> o.apps = list(value(args, ++i, a), APPS, a);
                case "--placements" -> o.placements = list(value(args, ++i, a), PLACEMENTS, a);
                case "--rows" -> o.rows = positive(value(args, ++i, a), a);
                case "--queries" -> o.queries = positive(value(args, ++i, a), a);
                case "--warmup" -> o.warmup = nonNegative(value(args, ++i, a), a);
                case "--seed" -> o.seed = parseLong(value(args, ++i, a), a);
                case "--rule-options" -> o.ruleOptions = value(args, ++i, a).trim();
                case "--java" -> o.java = value(args, ++i, a);
                case "--jvm-arg" -> o.jvmArgs.add(value(args, ++i, a));
                case "--timeout" -> o.timeoutSeconds = positive(value(args, ++i, a), a);
                case "--report" -> o.report = Path.of(value(args, ++i, a));
                case "--no-report" -> o.report = null;
                case "--verbose" -> o.verbose = true;
                case "--keep" -> o.keep = true;
                case "--help", "-h" -> throw new BadOption(null);
                default -> throw new BadOption("unknown option '" + a + "'");
            }
        }
        if (o.agent == null) {
            throw new BadOption("--agent JAR is required: the shm path runs both JVMs with the agent");
        }
        if (o.pairs < 0) {
            o.pairs = o.quick ? 2 : 5;
        }
        if (o.warmup < 0) {
            o.warmup = o.quick ? 1000 : 2000;
        }
        if (o.placements == null) {
            // one shared CPU is a setting users have (a one-CPU container, a busy host): every full run shows it
            o.placements = o.quick ? List.of("unpinned") : PLACEMENTS;
        }
        return o;
    }

    /** A mistake on the command line (message null: just the usage). */
    static final class BadOption extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadOption(String message) {
            super(message);
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new BadOption(option + " needs a value");
        }
        return args[i];
    }

    private static long parseLong(String v, String option) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new BadOption(option + " '" + v + "' is not a number");
        }
    }

    private static int nonNegative(String v, String option) {
        long n = parseLong(v, option);
        if (n < 0 || n > Integer.MAX_VALUE) {
            throw new BadOption(option + " '" + v + "' is out of range");
        }
        return (int) n;
    }

    private static int positive(String v, String option) {
        int n = nonNegative(v, option);
        if (n == 0) {
            throw new BadOption(option + " must be at least 1");
        }
        return n;
    }

    private static List<String> list(String v, List<String> allowed, String option) {
        List<String> out = new ArrayList<>();
        for (String s : v.split(",")) {
            String t = s.trim();
            if (!allowed.contains(t)) {
                throw new BadOption(option + ": '" + t + "' is not one of " + String.join(",", allowed));
            }
            if (!out.contains(t)) {
                out.add(t);
            }
        }
        return List.copyOf(out);
    }
}
