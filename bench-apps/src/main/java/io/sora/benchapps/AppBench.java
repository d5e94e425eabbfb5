package io.sora.benchapps;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Benchmarks real third-party servers through sora: H2's TCP server and Derby's network server,
 * each queried over JDBC by a client JVM, once over plain TCP (no agent at all) and once over shm
 * (the agent on both JVMs with matching rules), pair by pair, so each tcp/shm ratio comes from two
 * runs taken one right after the other. Each shm run is proven from both JVMs' traces: every
 * connection's path decision must say {@code shm}, or the benchmark stops with exit status 1.
 *
 * <p>Figures and ratios only; nothing is judged. Exit status 0 when every run completed and was
 * verified, 1 when a child failed or an shm run was not (all) on shm, 2 for bad options.
 */
public final class AppBench {
    private static final String SERVER_MAIN = "io.sora.benchapps.AppServer";
    private static final String CLIENT_MAIN = "io.sora.benchapps.QueryClient";
    /** The netty app's client: 4 KiB echo round trips on Netty's event loop, reported as "queries". */
    private static final String NETTY_CLIENT_MAIN = "io.sora.benchapps.NettyClient";
    /** The http app's client: the JDK's HttpClient against the JDK's HttpServer, point queries as GETs. */
    private static final String HTTP_CLIENT_MAIN = "io.sora.benchapps.HttpQueryClient";

    /** One run: one app, one placement, one path, one pair; the client's figures and the path evidence. */
    record Run(String app, String placement, String path, int pair, int order, Map<String, String> figures, Proof proof) {
        double get(String key) {
            return Double.parseDouble(figures.get(key));
        }
    }

    /** A run whose path could not be proven: the message names the app and the trace's reasons. */
    static final class PathFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PathFailure(String message) {
            super(message);
        }
    }

    private final Options o;
    private final Path work;
    private final long pid = ProcessHandle.current().pid();
    private final String classPath = System.getProperty("java.class.path");
    private final List<Run> runs = new ArrayList<>();

    private AppBench(Options o, Path work) {
        this.o = o;
        this.work = work;
    }

    public static void main(String[] args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (Options.BadOption e) {
            if (e.getMessage() != null) {
                System.err.println("AppBench: " + e.getMessage());
            }
            System.err.print(Options.USAGE);
            System.exit(e.getMessage() == null ? 0 : 2);
            return;
        }
        if (!Files.isRegularFile(Path.of(o.agent))) {
            System.err.println("AppBench: agent jar " + o.agent + " not found (build it: mvn -B -ntp -q package -DskipTests)");
            System.exit(2);
        }
        if (o.placements.contains("same") && !onPath("taskset")) {
            System.err.println("AppBench: placement 'same' needs taskset (Debian package util-linux)");
            System.exit(2);
        }
        int status;
        try {
            Path work = Files.createTempDirectory("sora-bench-apps.");
            status = new AppBench(o, work).run();
        } catch (Child.Failure | PathFailure e) {
            System.out.flush();
            System.err.println("AppBench: FAILED: " + e.getMessage());
            status = 1;
        } catch (IOException e) {
            System.err.println("AppBench: " + e);
            status = 1;
        }
        System.exit(status);
    }

    private int run() throws IOException {
        String date = ZonedDateTime.now().withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        String loadStart = loadAverage();
        long t0 = System.nanoTime();
        String jdk = childJdk();
        System.out.println("# sora bench --apps: H2 and Derby, tcp (no agent) vs shm (agent on both JVMs)");
        System.out.println();
        System.out.printf(Locale.ROOT, "date %s, JDK %s, CPUs %d (%s), load average at start %s%n",
                date, jdk, Runtime.getRuntime().availableProcessors(), cpuModel(), loadStart);
        System.out.printf(Locale.ROOT, "apps %s, placements %s, %d pair(s), %d rows, %d warm-up + %d timed point queries per run, seed %d%n",
                String.join(",", o.apps), String.join(",", o.placements), o.pairs, o.rows, o.warmup, o.queries, o.seed);
        System.out.printf("shm rules: server 'shm accept 127.0.0.1 PORT 127.0.0.1 %s', client 'shm connect 127.0.0.1 PORT %s'%n",
                o.ruleOptions, o.ruleOptions);
        System.out.println("work directory (child outputs, rule files, traces; kept when a run fails or with --keep): " + work);
        System.out.println();
        for (String app : o.apps) {
            for (String placement : o.placements) {
                for (int pair = 1; pair <= o.pairs; pair++) {
                    // alternate which path goes first, so a drift in the machine's load hits both alike
                    List<String> order = pair % 2 == 1 ? List.of("tcp", "shm") : List.of("shm", "tcp");
                    for (int k = 0; k < 2; k++) {
                        Run r = runOne(app, placement, order.get(k), pair, k + 1);
                        runs.add(r);
                        System.out.printf(Locale.ROOT, "  %-5s %-8s pair %d %-3s median %8.1f us  p99 %8.1f us  %8.0f q/s%s%n",
                                app, placement, pair, r.path(), r.get("median_us"), r.get("p99_us"), r.get("qps"),
                                evidence(r));
                    }
                }
            }
        }
        String loadEnd = loadAverage();
        double seconds = (System.nanoTime() - t0) / 1e9;
        String tables = tables();
        System.out.println();
        System.out.print(tables);
        System.out.printf(Locale.ROOT, "%nload average at end %s; the run took %.0f s%n", loadEnd, seconds);
        if (o.report != null) {
            Files.createDirectories(o.report);
            String header = String.format(Locale.ROOT, "# H2 and Derby through sora: tcp vs shm%n%n"
                    + "| | |%n| --- | --- |%n| date | %s |%n| JDK (children) | %s |%n| CPUs | %d (%s) |%n| kernel | %s |%n"
                    + "| load average at start | %s |%n| load average at end | %s |%n| duration | %.0f s |%n"
                    + "| apps | %s |%n| placements | %s |%n| pairs | %d (odd pairs run tcp first, even pairs shm first) |%n"
                    + "| per run | %d rows, %d untimed + %d timed point queries, seed %d |%n| shm rules | `shm accept 127.0.0.1 PORT 127.0.0.1 %s`, `shm connect 127.0.0.1 PORT %s` |%n"
                    + "| agent | %s |%n%n",
                    date, jdk, Runtime.getRuntime().availableProcessors(), cpuModel(), kernel(), loadStart, loadEnd, seconds,
                    String.join(",", o.apps), String.join(",", o.placements), o.pairs, o.rows, o.warmup, o.queries, o.seed,
                    o.ruleOptions, o.ruleOptions, o.agent);
            Files.writeString(o.report.resolve("apps.md"), header + tables + runTable(), StandardCharsets.UTF_8);
            Files.writeString(o.report.resolve("apps.json"), json(date, jdk, loadStart, loadEnd, seconds), StandardCharsets.UTF_8);
            System.out.println("report: " + o.report.resolve("apps.md") + ", " + o.report.resolve("apps.json"));
        }
        if (o.keep) {
            System.out.println("work directory kept: " + work);
        } else {
            deleteTree(work);
        }
        return 0;
    }

    /** One server JVM and one client JVM on one path; the server is stopped before this returns. */
    private Run runOne(String app, String placement, String path, int pair, int order) throws IOException {
        int port = freePort();
        Path dir = work.resolve(app + "-" + placement + "-pair" + pair + "-" + path);
        Files.createDirectories(dir);
        boolean shm = path.equals("shm");
        List<String> serverCmd = new ArrayList<>();
        List<String> clientCmd = new ArrayList<>();
        for (List<String> cmd : List.of(serverCmd, clientCmd)) {
            if (placement.equals("same")) {
                cmd.addAll(List.of("taskset", "-c", "0"));
            }
            cmd.add(o.java);
            cmd.addAll(o.jvmArgs);
        }
        Path serverTrace = dir.resolve("server-trace.json");
        Path clientTrace = dir.resolve("client-trace.json");
        if (shm) {
            String opts = o.ruleOptions.isEmpty() ? "" : " " + o.ruleOptions;
            Path serverConf = dir.resolve("server.conf");
            Path clientConf = dir.resolve("client.conf");
            Files.writeString(serverConf, "shm accept 127.0.0.1 " + port + " 127.0.0.1" + opts + "\n");
            Files.writeString(clientConf, "shm connect 127.0.0.1 " + port + opts + "\n");
            serverCmd.addAll(agentArgs(serverConf, serverTrace));
            if (app.equals("http") || app.equals("netty")) {
                // a non-blocking accept waits at most 20 ms for a client's pairing request; a cold
                // client JVM's first request once came after 25 ms here, and that connection went to TCP
                // at both ends (correctly, reason traced). The benchmark is about the data path
                serverCmd.add("-Dsora.nio.pairingWaitMillis=200");
            }
            clientCmd.addAll(agentArgs(clientConf, clientTrace));
        }
        long clientDeadlineMs = o.timeoutSeconds * 1000L;
        long serverDeadlineMs = 2 * clientDeadlineMs + 120_000L;
        if (app.equals("http")) {
            // TCP at its best: without it the JDK's server writes headers and body in two segments and
            // each response waits for the client's delayed ACK (Nagle): ~48 ms a request over TCP here,
            // which would make any fast path look 100x faster
            serverCmd.add("-Dsun.net.httpserver.nodelay=true");
        }
        serverCmd.addAll(List.of("-cp", classPath, SERVER_MAIN, app, Integer.toString(port), dir.resolve("data").toString(),
                Long.toString(pid), Long.toString(serverDeadlineMs)));
        clientCmd.addAll(List.of("-cp", classPath, clientMain(app), url(app, port), Integer.toString(o.rows),
                Integer.toString(o.warmup), Integer.toString(o.queries), Long.toString(o.seed),
                Long.toString(pid), Long.toString(clientDeadlineMs)));

        String name = app + " " + placement + " pair " + pair + " " + path;
        if (o.verbose) {
            System.out.println("  [" + name + "] server: " + String.join(" ", serverCmd));
            System.out.println("  [" + name + "] client: " + String.join(" ", clientCmd));
        }
        Child server = Child.start("server", serverCmd, dir, true);
        Map<String, String> figures;
        try {
            server.awaitLine("READY", System.nanoTime() + 60_000_000_000L);
            Child client = Child.start("client", clientCmd, dir, false);
            try {
                client.awaitExit(System.nanoTime() + clientDeadlineMs * 1_000_000L);
            } catch (Child.Failure e) {
                throw new Child.Failure("[" + name + "] " + e.getMessage());
            }
            figures = client.result();
            checkNoAgentError(name, client);
            server.tell("stop");
            server.awaitExit(System.nanoTime() + 60_000_000_000L);
            checkNoAgentError(name, server);
        } catch (Child.Failure e) {
            throw e.getMessage().startsWith("[") ? e : new Child.Failure("[" + name + "] " + e.getMessage());
        } finally {
            server.kill();
        }
        Proof proof = shm ? provePath(app, name, port, clientTrace, serverTrace) : null;
        return new Run(app, placement, path, pair, order, figures, proof);
    }

    private static String evidence(Run r) {
        if (r.proof() == null) {
            return "";
        }
        return "  (traces: " + r.proof().connections() + " client-server connection(s), all on shm"
                + (r.proof().internal().isEmpty() ? "" : "; server to itself: " + String.join(", ", r.proof().internal())) + ")";
    }

    private List<String> agentArgs(Path conf, Path trace) {
        return List.of("-javaagent:" + o.agent, "-Dsora.conf=" + conf, "-Dsora.trace=iprint=NET", "-Dsora.trace.file=" + trace);
    }

    private static String clientMain(String app) {
        return switch (app) {
            case "netty" -> NETTY_CLIENT_MAIN;
            case "http" -> HTTP_CLIENT_MAIN;
            default -> CLIENT_MAIN;
        };
    }

    private static String url(String app, int port) {
        return switch (app) {
            case "h2" -> "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:bench";
            case "derby" -> "jdbc:derby://127.0.0.1:" + port + "/memory:bench;create=true";
            case "netty" -> "127.0.0.1:" + port;
            case "http" -> "http://127.0.0.1:" + port;
            default -> throw new IllegalArgumentException(app);
        };
    }

    private static void checkNoAgentError(String name, Child c) {
        if (c.stderrContains("[sora] ERROR")) {
            throw c.failure("[" + name + "] reported '[sora] ERROR' on stderr");
        }
    }

    /**
     * What the two traces of an shm run prove: how many client-server connections there were (each
     * on shm at both ends), and the connections the server JVM made to itself, which are not part of
     * the benchmark (H2's start-up probe of its own port, for instance), with their path decisions.
     */
    record Proof(int connections, List<String> internal) {
    }

    /**
     * Every connection between the client and the server must be on shm at both ends: each path
     * decision in the client's trace says shm, and the server's trace has the same connection (its
     * remote port is the client's local port) on shm too. A server connection that is not the
     * client's must have both its ends in the server's own trace (a connection to itself); those are
     * listed, not counted. Anything else fails the run, naming the app and the trace's reasons.
     */
    private static Proof provePath(String app, String name, int port, Path clientTrace, Path serverTrace) throws IOException {
        List<TraceCheck.PathEvent> client = events(app, name, "client", clientTrace);
        List<TraceCheck.PathEvent> server = events(app, name, "server", serverTrace);
        List<String> problems = new ArrayList<>();
        if (client.isEmpty()) {
            problems.add("the client's trace has no path decision (\"hook\":\"path\"): the agent never saw a connection"
                    + " of the client (a socket or channel class it does not serve, such as Netty's native epoll transport?)");
        }
        List<TraceCheck.PathEvent> unmatched = new ArrayList<>(server);
        for (TraceCheck.PathEvent c : client) {
            if (!c.path().equals("shm")) {
                problems.add("client " + c);
            }
            TraceCheck.PathEvent s = unmatched.stream()
                    .filter(e -> e.localPort() == port && e.remotePort() == c.localPort()).findFirst().orElse(null);
            if (s == null) {
                problems.add("client " + c + ": no path decision for this connection in the server's trace");
                continue;
            }
            unmatched.remove(s);
            if (!s.path().equals("shm")) {
                problems.add("server " + s);
            }
        }
        // what is left of the server's trace: connections the server JVM made to itself show both ends
        List<String> internal = new ArrayList<>();
        while (!unmatched.isEmpty()) {
            TraceCheck.PathEvent s = unmatched.remove(0);
            TraceCheck.PathEvent mate = unmatched.stream()
                    .filter(e -> e.localPort() == s.remotePort() && e.remotePort() == s.localPort()).findFirst().orElse(null);
            if (mate != null) {
                unmatched.remove(mate);
                TraceCheck.PathEvent connectEnd = s.remotePort() == port ? s : mate;
                TraceCheck.PathEvent acceptEnd = connectEnd == s ? mate : s;
                internal.add("port " + connectEnd.localPort() + "->" + port + ": connecting end " + connectEnd.path()
                        + " (" + connectEnd.reason() + "), accepted end " + acceptEnd.path() + " (" + acceptEnd.reason() + ")");
            } else if (!s.path().equals("shm")) {
                problems.add("server " + s + ": a connection from neither the client nor the server itself");
            }
        }
        if (!problems.isEmpty()) {
            throw new PathFailure("[" + name + "] " + app + ": not every connection between client and server was on shm"
                    + " (traces " + clientTrace + ", " + serverTrace + "):\n    " + String.join("\n    ", problems));
        }
        return new Proof(client.size(), internal);
    }

    private static List<TraceCheck.PathEvent> events(String app, String name, String side, Path trace) throws IOException {
        if (!Files.isRegularFile(trace)) {
            throw new PathFailure("[" + name + "] " + app + ": the " + side + " wrote no trace (" + trace
                    + "): the agent did not start in that JVM");
        }
        return TraceCheck.pathEvents(trace);
    }

    // ---------------------------------------------------------------- tables

    private List<Run> select(String app, String placement, String path) {
        return runs.stream().filter(r -> r.app().equals(app) && r.placement().equals(placement) && r.path().equals(path))
                .sorted(Comparator.comparingInt(Run::pair)).toList();
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static double[] figure(List<Run> rs, String key) {
        return rs.stream().mapToDouble(r -> r.get(key)).toArray();
    }

    /** tcp/shm per pair of a figure (per-query median, or total time of the timed queries). */
    private double[] ratios(String app, String placement, String key) {
        List<Run> tcp = select(app, placement, "tcp");
        List<Run> shm = select(app, placement, "shm");
        double[] r = new double[Math.min(tcp.size(), shm.size())];
        for (int i = 0; i < r.length; i++) {
            r[i] = tcp.get(i).get(key) / shm.get(i).get(key);
        }
        return r;
    }

    private String tables() {
        StringBuilder sb = new StringBuilder();
        sb.append("## Per query, median over pairs\n\n");
        sb.append("| app | placement | path | median (us) | p99 (us) | queries/s | pairs | client-server connections (traces, per run) |\n");
        sb.append("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
        for (String app : o.apps) {
            for (String pl : o.placements) {
                for (String path : List.of("tcp", "shm")) {
                    List<Run> rs = select(app, pl, path);
                    String conns = path.equals("tcp") ? "- (no agent)" : rs.stream()
                            .map(r -> r.proof().connections() + " on shm" + (r.proof().internal().isEmpty() ? ""
                                    : " (+ " + r.proof().internal().size() + " of the server to itself, not measured: see every run)"))
                            .distinct().reduce((a, b) -> a + "; " + b).orElse("");
                    sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %.0f | %d | %s |%n", app, pl, path,
                            median(figure(rs, "median_us")), median(figure(rs, "p99_us")), median(figure(rs, "qps")), rs.size(), conns));
                }
            }
        }
        sb.append("\n## Ratio tcp/shm per adjacent pair (> 1: shm faster)\n\n");
        sb.append("| app | placement | per-query median, each pair | median of ratios | min-max | total time of the timed queries: median of ratios | min-max |\n");
        sb.append("| --- | --- | --- | ---: | --- | ---: | --- |\n");
        for (String app : o.apps) {
            for (String pl : o.placements) {
                double[] m = ratios(app, pl, "median_us");
                double[] t = ratios(app, pl, "total_ms");
                sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %s | %.2f | %s |%n", app, pl, list(m), median(m),
                        range(m), median(t), range(t)));
            }
        }
        StringBuilder targets = new StringBuilder();
        for (Target t : TARGETS) {
            if (!o.apps.contains(t.app()) || !o.placements.contains("unpinned")) continue;
            double figure = median(ratios(t.app(), "unpinned", "median_us"));
            targets.append(String.format(Locale.ROOT, "| #%s | %s | %.2fx | %s |%n", t.issue(), t.what(), figure,
                    Double.isNaN(figure) ? "not measured" : figure >= t.bound() ? "met"
                            : String.format(Locale.ROOT, "missed by %.2fx", t.bound() / figure)));
        }
        if (targets.length() > 0) {
            sb.append("\n## Targets\n\nThe open issues' targets these runs measure, per query (the median of the pair-by-pair")
                    .append(" ratios above): `met`, or `missed by` the factor between target and figure.\n\n")
                    .append("| issue | target | this run | verdict |\n| --- | --- | ---: | --- |\n").append(targets);
        }
        return sb.toString();
    }

    /** An open issue's target on an app: {@code bound} is the lowest ratio tcp/shm per query that meets it. */
    private record Target(String issue, String app, String what, double bound) {
    }

    private static final List<Target> TARGETS = List.of(
            new Target("10", "h2", "H2 point queries, unpinned: >= 1.5x faster than TCP", 1.5),
            new Target("11", "http", "HTTP over the JDK's server and client, unpinned: not slower than TCP", 1.0));

    private String runTable() {
        StringBuilder sb = new StringBuilder("\n## Every run\n\n");
        sb.append("| app | placement | pair | order | path | median (us) | p99 (us) | max (us) | total (ms) | queries/s | connect (ms) | create + insert (ms) | client-server connections on shm | server connections to itself |\n");
        sb.append("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
        for (Run r : runs) {
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f | %s | %s |%n",
                    r.app(), r.placement(), r.pair(), r.order(), r.path(), r.get("median_us"), r.get("p99_us"), r.get("max_us"),
                    r.get("total_ms"), r.get("qps"), r.get("connect_ms"), r.get("setup_ms"),
                    r.proof() == null ? "- (no agent)" : Integer.toString(r.proof().connections()),
                    r.proof() == null ? "-" : r.proof().internal().isEmpty() ? "none" : String.join(", ", r.proof().internal())));
        }
        return sb.toString();
    }

    private static String list(double[] v) {
        StringBuilder sb = new StringBuilder();
        for (double d : v) {
            sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", d));
        }
        return sb.toString();
    }

    private static String range(double[] v) {
        if (v.length == 0) {
            return "-";
        }
        double min = Arrays.stream(v).min().getAsDouble();
        double max = Arrays.stream(v).max().getAsDouble();
        return String.format(Locale.ROOT, "%.2f-%.2f", min, max);
    }

    // ---------------------------------------------------------------- JSON

    private String json(String date, String jdk, String loadStart, String loadEnd, double seconds) {
        StringBuilder sb = new StringBuilder("{\n");
        sb.append("  \"schema\": \"sora-bench-apps/1\",\n");
        sb.append("  \"machine\": {").append(kv("date", date)).append(", ").append(kv("jdk", jdk))
                .append(", ").append(kv("driver_java_version", System.getProperty("java.version")))
                .append(", \"cpus\": ").append(Runtime.getRuntime().availableProcessors())
                .append(", ").append(kv("cpu_model", cpuModel())).append(", ").append(kv("kernel", kernel()))
                .append(", ").append(kv("load_average_start", loadStart)).append(", ").append(kv("load_average_end", loadEnd))
                .append(String.format(Locale.ROOT, ", \"duration_s\": %.1f},%n", seconds));
        sb.append("  \"options\": {").append(kv("apps", String.join(",", o.apps))).append(", ")
                .append(kv("placements", String.join(",", o.placements)))
                .append(", \"pairs\": ").append(o.pairs).append(", \"rows\": ").append(o.rows)
                .append(", \"warmup\": ").append(o.warmup).append(", \"queries\": ").append(o.queries)
                .append(", \"seed\": ").append(o.seed).append(", ").append(kv("rule_options", o.ruleOptions))
                .append(", ").append(kv("agent", o.agent)).append(", ").append(kv("java", o.java))
                .append(", \"jvm_args\": [");
        for (int i = 0; i < o.jvmArgs.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(str(o.jvmArgs.get(i)));
        }
        sb.append("]},\n  \"runs\": [\n");
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            sb.append("    {").append(kv("app", r.app())).append(", ").append(kv("placement", r.placement()))
                    .append(", ").append(kv("path", r.path())).append(", \"pair\": ").append(r.pair())
                    .append(", \"order\": ").append(r.order());
            for (Map.Entry<String, String> e : r.figures().entrySet()) {
                sb.append(", ").append(str(e.getKey())).append(": ").append(e.getValue());
            }
            if (r.proof() != null) {
                sb.append(", \"connections_on_shm\": ").append(r.proof().connections())
                        .append(", \"server_connections_to_itself\": [");
                for (int j = 0; j < r.proof().internal().size(); j++) {
                    sb.append(j == 0 ? "" : ", ").append(str(r.proof().internal().get(j)));
                }
                sb.append("]");
            }
            sb.append(i == runs.size() - 1 ? "}\n" : "},\n");
        }
        sb.append("  ],\n  \"summary\": [\n");
        List<String> rows = new ArrayList<>();
        for (String app : o.apps) {
            for (String pl : o.placements) {
                StringBuilder row = new StringBuilder("    {").append(kv("app", app)).append(", ").append(kv("placement", pl));
                for (String path : List.of("tcp", "shm")) {
                    List<Run> rs = select(app, pl, path);
                    row.append(String.format(Locale.ROOT, ", \"%s\": {\"median_us\": %.3f, \"p99_us\": %.3f, \"qps\": %.1f, \"pairs\": %d}",
                            path, median(figure(rs, "median_us")), median(figure(rs, "p99_us")), median(figure(rs, "qps")), rs.size()));
                }
                for (String key : List.of("median_us", "total_ms")) {
                    double[] r = ratios(app, pl, key);
                    row.append(String.format(Locale.ROOT, ", \"ratio_tcp_over_shm_%s\": {\"per_pair\": [%s], \"median\": %.4f, \"min\": %.4f, \"max\": %.4f}",
                            key, list(r), median(r), Arrays.stream(r).min().orElse(Double.NaN), Arrays.stream(r).max().orElse(Double.NaN)));
                }
                rows.add(row.append("}").toString());
            }
        }
        sb.append(String.join(",\n", rows)).append("\n  ]\n}\n");
        return sb.toString().replace("NaN", "null");
    }

    private static String kv(String k, String v) {
        return str(k) + ": " + str(v);
    }

    private static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    // ---------------------------------------------------------------- machine

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    private String childJdk() {
        String driverJava = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        if (o.java.equals(driverJava)) {
            return System.getProperty("java.vendor") + " " + System.getProperty("java.runtime.version");
        }
        try {
            Process p = new ProcessBuilder(o.java, "-version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out.lines().skip(1).findFirst().orElse(out.strip());
        } catch (IOException e) {
            throw new Child.Failure(o.java + " -version: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String cpuModel() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(l -> l.startsWith("model name") && l.contains(":"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown");
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String kernel() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
        } catch (IOException e) {
            return System.getProperty("os.version");
        }
    }

    private static boolean onPath(String exe) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, exe))) {
                return true;
            }
        }
        return false;
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a leftover temp directory is harmless
        }
    }
}
