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
            "usage: Bench [--agent sora-agent.jar] [--quick] [--report DIR | --no-report] [option...]",
            "  --agent          the sora agent jar; without it the agent rows are skipped",
            "  --agent-options  appended to the agent argument after conf=FILE, e.g. trace=iprint=NET",
            "  --quick          a smoke run (4 sizes, fewer iterations, 64 MiB copy), about a minute",
            "  --sizes          ping-pong message sizes (default 64,256,1k,4k,16k,64k,256k,1m; quick 64,4k,64k,1m)",
            "  --write-sizes    streaming write sizes (default: as --sizes)",
            "  --iterations     most timed round trips per repetition, used at small sizes (default 2000; quick 500)",
            "  --pp-mib         MiB per ping-pong repetition that bounds the round trips at large sizes (64; quick 8)",
            "  --reps           repetitions per size (default 5; quick 3)",
            "  --warmup         untimed round trips before the first size (default 5000; quick 500)",
            "  --stream-ms      target duration of one streaming repetition (default 250; quick 40)",
            "  --stream-max-mib most MiB in one streaming repetition (default 1024; quick 64)",
            "  --stream-reps    streaming repetitions per write size (default 5; quick 3)",
            "  --copy-mib       size of the file copied, 0 = no copy (default 512; quick 64)",
            "  --copy-reps      file copies per row (default 3; quick 2)",
            "  --startup-runs   JVM start-ups timed with and without the agent, 0 = none (default 10; quick 3)",
            "  --paths          rows to run: tcp,tcp+agent,shm,shm-1m,rdma,floor (default all)",
            "  --placements     split (two CPUs), same (one CPU); default both",
            "  --java           the java executable the children run on (default: the driver's)",
            "  --jvm-arg        an extra JVM option for every child (repeatable)",
            "  --rule-options   key=value options appended to every rule (default \"wait=2s\"; \"\" for none)",
            "  --rdma-address   the local IP of the RDMA device's interface (the rdma row needs it)",
            "  --external-row   NAME=RTT_US[,MBPS]: a peer measured outside the driver (e.g. ib_send_lat), shown in",
            "                   the peers table and results.json next to the driver's rows; '-' = none (repeatable)",
            "  --timeout        seconds one client child may run before it is killed (default 300; quick 90)",
            "  --report         directory for results.json, report.md and charts (default target/bench-report)",
            "  --no-report      console only",
            "  --charts         the chart script (default tools/bench/charts.sh, found from here or the jar)",
            "  --no-charts      write results.json and report.md but draw no charts",
            "  --verbose        print each child's command line");

    static final String FULL_SIZES = "64,256,1k,4k,16k,64k,256k,1m";
    static final String QUICK_SIZES = "64,4k,64k,1m";

    Path agent;
    String agentOptions;
    boolean quick;
    int[] sizes;
    int[] writeSizes;
    Integer iterations;
    Integer ppMib;
    Integer reps;
    Integer warmup;
    Integer streamMs;
    Integer streamMaxMib;
    Integer streamReps;
    Integer copyMib;
    Integer copyReps;
    Integer startupRuns;
    int copyChunk = 64 * 1024;
    Integer timeoutSeconds;
    Path report = Path.of("target", "bench-report");
    String charts;
    boolean drawCharts = true;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Set<Route> routes = EnumSet.allOf(Route.class);
    List<String> placements = List.of("split", "same");
    /**
     * Options appended to every rule. The pairing wait is raised from JSOR's 100 ms because the
     * benchmark measures the data path, not set-up: on a loaded machine a freshly started JVM can
     * miss 100 ms and fall back to TCP, which would abort the run.
     */
    String ruleOptions = "wait=2s";
    String rdmaAddress;
    final List<String> jvmArgs = new ArrayList<>();
    /** Rows measured outside the driver, in the order given ({@code --external-row}). */
    final List<PeerRow> peers = new ArrayList<>();
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
                case "--no-report" -> o.report = null;
                case "--no-charts" -> o.drawCharts = false;
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
            case "--rdma-address" -> rdmaAddress = value;
            case "--external-row" -> peers.add(PeerRow.parse(value));
            case "--sizes" -> sizes = Sweep.parseSizes(key, value);
            case "--write-sizes" -> writeSizes = Sweep.parseSizes(key, value);
            case "--iterations" -> iterations = positive(key, value);
            case "--pp-mib" -> ppMib = positive(key, value);
            case "--reps" -> reps = positive(key, value);
            case "--warmup" -> warmup = nonNegative(key, value);
            case "--stream-ms" -> streamMs = positive(key, value);
            case "--stream-max-mib" -> streamMaxMib = positive(key, value);
            case "--stream-reps" -> streamReps = positive(key, value);
            case "--copy-mib" -> copyMib = nonNegative(key, value);
            case "--copy-reps" -> copyReps = positive(key, value);
            case "--startup-runs" -> startupRuns = nonNegative(key, value);
            case "--timeout" -> timeoutSeconds = positive(key, value);
            case "--report" -> report = Path.of(value);
            case "--charts" -> charts = value;
            case "--java" -> java = value;
            case "--paths" -> {
                routes = EnumSet.noneOf(Route.class);
                for (String p : value.split(",")) {
                    routes.add(Route.byKey(p.trim()));
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
        sizes = sizes != null ? sizes : Sweep.parseSizes("sizes", quick ? QUICK_SIZES : FULL_SIZES);
        writeSizes = writeSizes != null ? writeSizes : sizes.clone();
        iterations = iterations != null ? iterations : quick ? 500 : 2000;
        ppMib = ppMib != null ? ppMib : quick ? 8 : 64;
        reps = reps != null ? reps : quick ? 3 : 5;
        warmup = warmup != null ? warmup : quick ? 500 : 5000;
        streamMs = streamMs != null ? streamMs : quick ? 40 : 250;
        streamMaxMib = streamMaxMib != null ? streamMaxMib : quick ? 64 : 1024;
        streamReps = streamReps != null ? streamReps : quick ? 3 : 5;
        copyMib = copyMib != null ? copyMib : quick ? 64 : 512;
        copyReps = copyReps != null ? copyReps : quick ? 2 : 3;
        startupRuns = startupRuns != null ? startupRuns : quick ? 3 : 10;
        timeoutSeconds = timeoutSeconds != null ? timeoutSeconds : quick ? 90 : 300;
        if ((long) iterations * reps > 50_000_000L) {
            throw new IllegalArgumentException("--iterations " + iterations + " x --reps " + reps + " exceeds 50,000,000 samples");
        }
        if (copyMib > 16 * 1024) {
            throw new IllegalArgumentException("--copy-mib " + copyMib + " exceeds 16384 (the file lives in memory, /dev/shm)");
        }
    }

    long ppBytes() {
        return ppMib * 1024L * 1024L;
    }

    long streamMaxBytes() {
        return streamMaxMib * 1024L * 1024L;
    }

    long copyBytes() {
        return copyMib * 1024L * 1024L;
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
