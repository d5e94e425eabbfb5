package io.sora.examples.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The field benchmark: sora as users run it, always as a ratio to TCP measured in the same run.
 * Every figure comes from freshly forked JVM pairs (server + client) with no untimed warm-up,
 * alternating a plain TCP pair (no agent at all) and a shm pair (the agent on both sides), so that
 * drift in the machine's load hits both paths alike; each row reports the median over pairs, and the
 * ratio tcp/shm of each adjacent pair (throughput: shm/tcp), so a ratio above 1 means shm was faster.
 * Rows: {@code pp4k} (4 KiB ping-pong from the first round trip; with the bare floor under
 * {@code split}), {@code sample-cold} (the JSOR article's sample in cold JVMs, path proven from the
 * trace), {@code think} (the client computes between round trips), {@code conns} (1, 4, 16
 * connections from one client JVM), {@code hog} (a CPU hog runs beside), {@code setup} (connection
 * set-up one after another: a client without sora against a server with an accept rule, and both
 * sides attached, with a blocking server and with a selector server), {@code nio} (a selector server, 1 and 16 connections). Writes {@code field.md} and
 * {@code field.json}. Exit status 0 when every child ran and verified its data and path, 1 when one
 * failed, 2 on bad options.
 *
 * <pre>java -cp sora-examples.jar io.sora.examples.bench.FieldBench --agent sora-agent.jar [--quick] [--pairs N] [--rows LIST]</pre>
 *
 * Single-threaded; a shutdown hook kills children still alive if the driver is interrupted.
 */
public final class FieldBench {
    static final int SIZE = 4096;
    static final int SAMPLE_ITERATIONS = 1000;
    static final long[] THINK_US = {0, 5, 20, 100};
    static final int[] CONNS = {1, 4, 16};
    private static final long READY_SECONDS = 60;
    private static final long SERVER_EXIT_SECONDS = 30;
    private static final String LOOPBACK = "127.0.0.1";
    private static final String AGENT_ERROR = "[sora] ERROR";
    private static final Pattern SAMPLE_RESULT = Pattern.compile("Round trip time of (\\d+) bytes: (\\d+) usec");

    /** What one JVM pair of a ping-pong row does. */
    /** @param idle connections the client opens first and leaves idle (open, no traffic) for the whole run */
    record Spec(int size, int rts, int conns, long thinkNs, int idle) {
        Spec(int size, int rts, int conns, long thinkNs) {
            this(size, rts, conns, thinkNs, 0);
        }
    }

    /** The idle connections beside the busy one in the nio row's idle setting: a server most of whose clients are quiet. */
    static final int NIO_IDLE = 500;

    private final FieldOptions o;
    private final List<ChildProcess> live = new CopyOnWriteArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private Path dir;
    private Path shmDir;
    private String timeoutExe;
    private int children;

    private FieldBench(FieldOptions o) {
        this.o = o;
    }

    public static void main(String[] argv) {
        FieldOptions o;
        try {
            o = FieldOptions.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("FieldBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (o.help) {
            System.out.println(FieldOptions.USAGE);
            return;
        }
        if (!Files.isRegularFile(o.agent)) {
            System.err.println("FieldBench: agent jar " + o.agent + " not found (build it: mvn -B -q package -DskipTests)");
            System.exit(2);
        }
        FieldBench bench = new FieldBench(o);
        Runtime.getRuntime().addShutdownHook(new Thread(bench::cleanUp, "field-cleanup"));
        try {
            bench.run();
        } catch (ChildProcess.Failure f) {
            System.out.flush();
            System.err.println("FieldBench: FAILED, a child failed: " + f.getMessage());
            System.exit(1);
        } catch (UncheckedIOException e) {
            System.err.println("FieldBench: FAILED: " + e.getMessage() + ": " + e.getCause());
            System.exit(1);
        } catch (IllegalStateException e) {
            System.err.println("FieldBench: " + e.getMessage());
            System.exit(2);
        }
    }

    private void run() {
        long started = System.nanoTime();
        String loadStart = Machine.loadAverage();
        Machine machine = Machine.describe(o.java);
        Map<String, Placement> placements = placements(machine);
        try {
            dir = Files.createTempDirectory("sora-field-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        shmDir = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : dir;
        timeoutExe = Machine.findOnPath("timeout");
        if (timeoutExe == null) {
            notes.add("coreutils timeout not found: the sample children are bounded only by the driver's deadlines");
        }
        System.out.println("== sora field benchmark: as users run it, tcp and shm pairs alternating, " + o.pairs
                + " pair(s) per setting");
        System.out.println("  " + machine.cpusOnline() + " CPUs (usable " + machine.cpusAllowed() + "), " + machine.cpuModel()
                + (machine.virtualised() ? ", virtual machine" : ""));
        System.out.println("  JDK " + machine.jdk());
        System.out.println("  load average at start: " + loadStart + "; children's output in " + dir
                + " (deleted at exit unless -Dsora.field.keep=true)");
        List<FieldCase> cases = new ArrayList<>();
        for (String row : o.rows) {
            switch (row) {
                case "pp4k" -> pp4k(placements, cases);
                case "sample-cold" -> sampleCold(placements, cases);
                case "think" -> think(placements, cases);
                case "conns" -> conns(placements, cases);
                case "hog" -> hog(placements, cases);
                case "setup" -> setup(placements, cases);
                case "nio" -> nio(placements, cases);
                default -> throw new IllegalStateException("unknown row " + row);
            }
        }
        String loadEnd = Machine.loadAverage();
        double seconds = (System.nanoTime() - started) / 1e9;
        notes.add(children + " child processes started");
        FieldReport report = new FieldReport(machine, o, cases, notes, loadStart, loadEnd, seconds);
        System.out.println();
        System.out.print(report.console());
        if (o.report != null) {
            report.write(o.report);
            System.out.println("\n== report: " + o.report.resolve("field.md") + ", figures in " + o.report.resolve("field.json"));
        }
    }

    /** The requested placements this machine can run, by label; each one dropped leaves a note. */
    private Map<String, Placement> placements(Machine m) {
        Map<String, Placement> out = new LinkedHashMap<>();
        List<Integer> cpus = m.cpusAllowed();
        for (String label : o.placements) {
            if (label.equals("unpinned")) {
                out.put(label, new Placement(label, -1, -1));
            } else if (!m.canPin()) {
                notes.add("taskset (util-linux) not found: placement " + label + " skipped");
            } else if (label.equals("split")) {
                if (cpus.size() < 2) {
                    notes.add("only one usable CPU " + cpus + ": placement split skipped");
                } else {
                    out.put(label, new Placement(label, cpus.get(1), cpus.get(0)));
                }
            } else {
                out.put(label, new Placement(label, cpus.get(0), cpus.get(0)));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no placement left to run: " + String.join("; ", notes));
        }
        return out;
    }

    /** The row's placements among those requested and possible; a row left with none is noted. */
    private List<Placement> rowPlacements(String row, Map<String, Placement> all, String... wanted) {
        List<Placement> out = new ArrayList<>();
        for (String w : wanted) {
            if (all.containsKey(w)) {
                out.add(all.get(w));
            }
        }
        if (out.isEmpty()) {
            notes.add("row " + row + " skipped: it runs under " + String.join(", ", wanted) + ", none of which is selected");
        }
        return out;
    }

    private void pp4k(Map<String, Placement> all, List<FieldCase> cases) {
        Spec spec = new Spec(SIZE, o.pp4kRoundTrips(), 1, 0);
        for (Placement p : rowPlacements("pp4k", all, "unpinned", "split", "same")) {
            FieldCase c = newCase(cases, "pp4k", p, false, spec);
            for (int i = 1; i <= o.pairs; i++) {
                c.tcp.add(pingPong(c, p, spec, false, i));
                c.shm.add(pingPong(c, p, spec, true, i));
                if (p.label().equals("split")) {
                    c.floor.add(floor(c, p, spec, i));
                }
            }
        }
    }

    private void sampleCold(Map<String, Placement> all, List<FieldCase> cases) {
        for (Placement p : rowPlacements("sample-cold", all, "unpinned", "same")) {
            FieldCase c = new FieldCase("sample-cold", p.label(), p.label(), false);
            c.params.putAll(Map.of("iterations", SAMPLE_ITERATIONS, "size", SIZE));
            cases.add(c);
            System.out.println("\n== sample-cold, " + describe(p) + ": SampleServer/SampleClient 127.0.0.1 PORT "
                    + SAMPLE_ITERATIONS + " " + SIZE + ", fresh JVMs, demo rules (no options)");
            // the same pairs timed whole, as a user running the sample waits for them: its own row, so that
            // the round trips' figure never stands alone
            FieldCase whole = new FieldCase("sample-cold", "whole pair, launch to exit, " + p.label(), p.label(), false);
            whole.params.putAll(c.params);
            whole.params.put("measure", "the server launched until both JVMs exited (JVM and agent start-up, first"
                    + " connection, round trips, exit)");
            for (int i = 1; i <= o.pairs; i++) {
                c.tcp.add(sample(c, p, false, i));
                whole.tcp.add(wholePair(c.tcp.get(c.tcp.size() - 1)));
                c.shm.add(sample(c, p, true, i));
                whole.shm.add(wholePair(c.shm.get(c.shm.size() - 1)));
            }
            cases.add(whole);
        }
    }

    /** A sample pair's run as its whole-pair figure: launch to exit as the "median" of one value. */
    private static FieldCase.Run wholePair(FieldCase.Run r) {
        double ns = Double.parseDouble(r.values().getOrDefault("pair_ns", "NaN"));
        return new FieldCase.Run(r.path(), r.pair(), ns, Double.NaN, 1e9 / ns, r.onPath(), r.actualPath(), r.values(),
                r.seconds());
    }

    private void think(Map<String, Placement> all, List<FieldCase> cases) {
        for (Placement p : rowPlacements("think", all, "unpinned", "split")) {
            for (long t : THINK_US) {
                Spec spec = new Spec(SIZE, o.thinkRoundTrips(), 1, t * 1000);
                FieldCase c = newCase(cases, "think", "T=" + t + " µs, " + p.label(), p, false, spec);
                c.params.put("think_us", t);
                for (int i = 1; i <= o.pairs; i++) {
                    c.tcp.add(pingPong(c, p, spec, false, i));
                    c.shm.add(pingPong(c, p, spec, true, i));
                }
            }
        }
    }

    private void conns(Map<String, Placement> all, List<FieldCase> cases) {
        for (Placement p : rowPlacements("conns", all, "unpinned")) {
            for (int n : CONNS) {
                Spec spec = new Spec(SIZE, o.connsRoundTrips() / n * n, n, 0);
                FieldCase c = newCase(cases, "conns", n + " conn" + (n == 1 ? "" : "s") + ", " + p.label(), p, true, spec);
                for (int i = 1; i <= o.pairs; i++) {
                    c.tcp.add(pingPong(c, p, spec, false, i));
                    c.shm.add(pingPong(c, p, spec, true, i));
                }
            }
        }
    }

    /**
     * An NIO server (FieldNioServer: one thread, a selector, non-blocking accept and echo) and blocking
     * socket clients (FieldClient): one connection (latency, as pp4k) and 16 (throughput, as conns).
     */
    private void nio(Map<String, Placement> all, List<FieldCase> cases) {
        for (Placement p : rowPlacements("nio", all, "unpinned", "split", "same")) {
            Spec one = new Spec(SIZE, o.pp4kRoundTrips(), 1, 0);
            FieldCase c = newCase(cases, "nio", "selector server, 1 conn, " + p.label(), p, false, one);
            for (int i = 1; i <= o.pairs; i++) {
                c.tcp.add(pingPong(c, p, one, false, i, FieldNioServer.class));
                c.shm.add(pingPong(c, p, one, true, i, FieldNioServer.class));
            }
            Spec many = new Spec(SIZE, o.connsRoundTrips() / 16 * 16, 16, 0);
            FieldCase m = newCase(cases, "nio", "selector server, 16 conns, " + p.label(), p, true, many);
            for (int i = 1; i <= o.pairs; i++) {
                m.tcp.add(pingPong(m, p, many, false, i, FieldNioServer.class));
                m.shm.add(pingPong(m, p, many, true, i, FieldNioServer.class));
            }
            if (!p.label().equals("unpinned")) continue;
            // most of a server's clients are quiet: the busy connection's round trip must not pay for them
            Spec beside = new Spec(SIZE, o.pp4kRoundTrips(), 1, 0, NIO_IDLE);
            FieldCase b = newCase(cases, "nio", "selector server, 1 conn beside " + NIO_IDLE + " idle, " + p.label(), p, false, beside);
            for (int i = 1; i <= o.pairs; i++) {
                b.tcp.add(pingPong(b, p, beside, false, i, FieldNioServer.class));
                b.shm.add(pingPong(b, p, beside, true, i, FieldNioServer.class));
            }
        }
    }

    private void hog(Map<String, Placement> all, List<FieldCase> cases) {
        for (Placement p : rowPlacements("hog", all, "unpinned")) {
            Spec spec = new Spec(SIZE, o.hogRoundTrips(), 1, 0);
            FieldCase c = newCase(cases, "hog", p, false, spec);
            // bounded: it ends itself after the longest the row can take, and is killed when the row ends
            long bound = o.pairs * 2L * (o.timeoutSeconds + READY_SECONDS + SERVER_EXIT_SECONDS);
            c.params.put("hog", "one thread computing without pause (FieldHog), unpinned, for the whole row");
            ChildProcess hog = launch(c.id() + "-hog", -1, List.of(), FieldHog.class.getName(),
                    List.of("seconds=" + bound, "timeout=" + (bound + 30)), true);
            try {
                hog.awaitLine("READY", deadline(READY_SECONDS));
                for (int i = 1; i <= o.pairs; i++) {
                    c.tcp.add(pingPong(c, p, spec, false, i));
                    c.shm.add(pingPong(c, p, spec, true, i));
                }
            } finally {
                hog.kill();
                live.remove(hog);
            }
        }
    }

    /**
     * Connection set-up, unpinned: {@code accept} (the shm column: only the server has the agent, with an
     * shm accept rule; every connection must stay on TCP and not wait for a pairing) and {@code both
     * attached} (the shm column: both sides attached, every connection on shm), against a blocking
     * server and against a selector server ({@code FieldChurnServer server=selector}); the tcp column has no
     * agent at all.
     */
    private void setup(Map<String, Placement> all, List<FieldCase> cases) {
        int n = o.setupConnections();
        for (Placement p : rowPlacements("setup", all, "unpinned")) {
            // the client without sora, both attached, and both attached against a selector server (as Netty,
            // Undertow, Jetty serve): before 2026-11-30 a selector server's connections never kept their segment
            for (int kind = 0; kind < 3; kind++) {
                boolean clientAgent = kind > 0;
                boolean selector = kind == 2;
                String setting = (clientAgent ? "both attached" : "accept, client without sora") + (selector ? ", selector server" : "")
                        + ", " + p.label();
                FieldCase c = new FieldCase("setup", setting, p.label(), false);
                c.params.putAll(Map.of("connections", n, "client_agent", clientAgent, "server", selector ? "selector" : "blocking"));
                cases.add(c);
                System.out.println("\n== setup, " + setting + " (" + describe(p) + "): " + n
                        + " connections one after another, new Socket() to first 1-byte answer");
                for (int i = 1; i <= o.pairs; i++) {
                    c.tcp.add(churn(c, p, n, false, false, selector, i));
                    c.shm.add(churn(c, p, n, true, clientAgent, selector, i));
                }
            }
        }
    }

    private FieldCase.Run churn(FieldCase c, Placement p, int n, boolean serverAgent, boolean clientAgent, boolean selector, int pair) {
        String column = serverAgent ? "shm" : "tcp";
        String path = serverAgent && clientAgent ? "shm" : "tcp";
        String tag = c.id() + "-" + pair + "-" + column;
        long start = System.nanoTime();
        int port = freePort();
        ChildProcess server = null;
        ChildProcess client = null;
        try {
            List<String> common = List.of("address=" + LOOPBACK, "port=" + port, "n=" + n, "path=" + path);
            List<String> sArgs = new ArrayList<>(common);
            sArgs.add("agent=" + (serverAgent ? "yes" : "no"));
            if (selector) sArgs.add("server=selector");
            server = launch(tag + "-server", p.serverCpu(), serverAgent ? agentOption(tag + "-server", port, true) : List.of(),
                    FieldChurnServer.class.getName(), sArgs, true);
            server.awaitLine("READY", deadline(READY_SECONDS));
            List<String> cArgs = new ArrayList<>(common);
            cArgs.add("agent=" + (clientAgent ? "yes" : "no"));
            cArgs.add("server_pid=" + server.pid()); // CPU per connection of both processes (FieldChurnClient)
            client = launch(tag + "-client", p.clientCpu(), clientAgent ? agentOption(tag + "-client", port, false) : List.of(),
                    FieldChurnClient.class.getName(), cArgs, true);
            client.awaitExit(deadline(o.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            if (serverAgent) server.checkStderrFree(AGENT_ERROR);
            if (clientAgent) client.checkStderrFree(AGENT_ERROR);
            Map<String, String> r = client.result();
            String done = server.stdoutLine("DONE served=");
            if (done == null || !done.equals("DONE served=" + n)) {
                throw server.failure("served " + done + ", expected " + n + " connections");
            }
            String actual = path + (serverAgent && !clientAgent ? " (server attached)" : "");
            FieldCase.Run run = new FieldCase.Run(column, pair, num(client, r, "median_ns"), num(client, r, "p99_ns"),
                    num(client, r, "rtps"), true, actual, r, (System.nanoTime() - start) / 1e9);
            progress(c, run);
            return run;
        } finally {
            end(client, server);
        }
    }

    private FieldCase newCase(List<FieldCase> cases, String row, Placement p, boolean throughput, Spec spec) {
        return newCase(cases, row, p.label(), p, throughput, spec);
    }

    private FieldCase newCase(List<FieldCase> cases, String row, String setting, Placement p, boolean throughput, Spec spec) {
        FieldCase c = new FieldCase(row, setting, p.label(), throughput);
        c.params.put("size", spec.size());
        c.params.put("round_trips", spec.rts());
        c.params.put("connections", spec.conns());
        c.params.put("think_ns", spec.thinkNs());
        if (spec.idle() > 0) c.params.put("idle_connections", spec.idle());
        cases.add(c);
        System.out.println("\n== " + row + ", " + setting + " (" + describe(p) + "): " + Sweep.label(spec.size())
                + " ping-pong, " + spec.rts() + " round trips" + (spec.conns() > 1 ? " over " + spec.conns() + " connections" : "")
                + (spec.thinkNs() > 0 ? ", " + spec.thinkNs() / 1000 + " µs computing between round trips" : "")
                + (spec.idle() > 0 ? ", " + spec.idle() + " idle connections beside" : "")
                + ", timed from the first");
        return c;
    }

    /** One JVM pair of a ping-pong row on tcp (no agent) or shm (agent with matching rules on both sides). */
    private FieldCase.Run pingPong(FieldCase c, Placement p, Spec spec, boolean shm, int pair) {
        return pingPong(c, p, spec, shm, pair, FieldServer.class);
    }

    /** As above, with {@code serverMain} as the server child (FieldServer's threads, or FieldNioServer's selector). */
    private FieldCase.Run pingPong(FieldCase c, Placement p, Spec spec, boolean shm, int pair, Class<?> serverMain) {
        String path = shm ? "shm" : "tcp";
        String tag = c.id() + "-" + pair + "-" + path;
        long start = System.nanoTime();
        int port = freePort();
        ChildProcess server = null;
        ChildProcess client = null;
        try {
            List<String> common = List.of("address=" + LOOPBACK, "port=" + port, "size=" + spec.size(),
                    "path=" + path, "agent=" + (shm ? "yes" : "no"));
            List<String> serverArgs = new ArrayList<>(common);
            serverArgs.add("conns=" + (spec.conns() + spec.idle())); // it serves the idle ones too, until they close
            server = launch(tag + "-server", p.serverCpu(), shm ? agentOption(tag + "-server", port, true) : List.of(),
                    serverMain.getName(), serverArgs, true);
            server.awaitLine("READY", deadline(READY_SECONDS));
            List<String> args = new ArrayList<>(common);
            args.addAll(List.of("conns=" + spec.conns(), "rts=" + spec.rts(), "think-ns=" + spec.thinkNs()));
            if (spec.idle() > 0) args.add("idle=" + spec.idle());
            client = launch(tag + "-client", p.clientCpu(), shm ? agentOption(tag + "-client", port, false) : List.of(),
                    FieldClient.class.getName(), args, true);
            client.awaitExit(deadline(o.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            if (shm) {
                server.checkStderrFree(AGENT_ERROR);
                client.checkStderrFree(AGENT_ERROR);
            }
            Map<String, String> r = client.result();
            if (!path.equals(r.get("path"))) {
                throw client.failure("reported path=" + r.get("path") + ", expected " + path);
            }
            String done = server.stdoutLine("DONE served=");
            if (done == null || !done.equals("DONE served=" + r.get("rts"))) {
                throw server.failure("echoed " + done + " but the client timed " + r.get("rts") + " round trips");
            }
            FieldCase.Run run = new FieldCase.Run(path, pair, num(client, r, "median_ns"), num(client, r, "p99_ns"),
                    num(client, r, "rtps"), true, path, r, (System.nanoTime() - start) / 1e9);
            progress(c, run);
            return run;
        } finally {
            end(client, server);
        }
    }

    /** The bare floor after a split pair: FloorPingPong over a mapped file, same round trips, no warm-up. */
    private FieldCase.Run floor(FieldCase c, Placement p, Spec spec, int pair) {
        String tag = c.id() + "-" + pair + "-floor";
        long start = System.nanoTime();
        String file = shmDir.resolve("sora-field-" + ProcessHandle.current().pid() + "-floor").toString();
        ChildProcess server = null;
        ChildProcess client = null;
        try {
            String sizes = "pp-sizes=" + spec.size();
            server = launch(tag + "-server", p.serverCpu(), List.of(), FloorPingPong.class.getName(),
                    List.of("role=server", "file=" + file, sizes), true);
            server.awaitLine("READY", deadline(READY_SECONDS));
            client = launch(tag + "-client", p.clientCpu(), List.of(), FloorPingPong.class.getName(),
                    List.of("role=client", "file=" + file, sizes, "pp-iterations=" + spec.rts(),
                            "pp-bytes=" + (long) spec.rts() * spec.size(), "warmup=0", "reps=1"), true);
            client.awaitExit(deadline(o.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            Map<String, String> r = client.result();
            String k = "pp." + spec.size() + ".";
            if (!"floor".equals(r.get("path")) || !String.valueOf(spec.rts()).equals(r.get(k + "samples"))) {
                throw client.failure("expected path=floor and " + spec.rts() + " samples, got " + r);
            }
            FieldCase.Run run = new FieldCase.Run("floor", pair, num(client, r, k + "rtt_median_ns"),
                    num(client, r, k + "rtt_p99_ns"), Double.NaN, true, "floor", r, (System.nanoTime() - start) / 1e9);
            progress(c, run);
            return run;
        } finally {
            end(client, server);
            new java.io.File(file).delete();
        }
    }

    /**
     * One pair of the article's sample in cold JVMs. On shm the rules are exactly the demo's (no
     * options) and both sides trace NET; the pair counts as shm only if both traces show a path event
     * on shm, otherwise it is reported as fallen back to TCP.
     */
    private FieldCase.Run sample(FieldCase c, Placement p, boolean shm, int pair) {
        String path = shm ? "shm" : "tcp";
        String tag = c.id() + "-" + pair + "-" + path;
        long start = System.nanoTime();
        int port = freePort();
        Path serverTrace = dir.resolve(tag + "-server-trace.json");
        Path clientTrace = dir.resolve(tag + "-client-trace.json");
        ChildProcess server = null;
        ChildProcess client = null;
        try {
            List<String> args = List.of(LOOPBACK, Integer.toString(port), Integer.toString(SAMPLE_ITERATIONS),
                    Integer.toString(SIZE));
            List<String> serverJvm = shm ? demoAgent(tag + "-server", serverTrace,
                    "shm accept " + LOOPBACK + " " + port + " " + LOOPBACK) : List.of();
            List<String> clientJvm = shm ? demoAgent(tag + "-client", clientTrace, "shm connect " + LOOPBACK + " " + port)
                    : List.of();
            long launched = System.nanoTime();
            server = launch(tag + "-server", p.serverCpu(), serverJvm, "io.sora.examples.SampleServer", args, false);
            server.awaitLine("Server Ready>", deadline(READY_SECONDS));
            client = launch(tag + "-client", p.clientCpu(), clientJvm, "io.sora.examples.SampleClient", args, false);
            client.awaitExit(deadline(o.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            // what a user waits for: the server launched, ready, the client launched, both exited (start-up,
            // the agent's, the first connection and the warm-up wait included); the sample's own figure is the
            // round trips alone
            long pairNanos = System.nanoTime() - launched;
            if (shm) {
                server.checkStderrFree(AGENT_ERROR);
                client.checkStderrFree(AGENT_ERROR);
            }
            long bytes = (long) SAMPLE_ITERATIONS * SIZE;
            String line = client.stdoutLine("Round trip time of ");
            Matcher m = line == null ? null : SAMPLE_RESULT.matcher(line);
            if (m == null || !m.matches() || Long.parseLong(m.group(1)) != bytes) {
                throw client.failure("printed no line 'Round trip time of " + bytes + " bytes: U usec'");
            }
            if (server.stdoutLine("Received/Sent " + bytes + " bytes") == null) {
                throw server.failure("printed no line 'Received/Sent " + bytes + " bytes'");
            }
            long usec = Long.parseLong(m.group(2));
            Map<String, String> values = new LinkedHashMap<>();
            values.put("usec", Long.toString(usec));
            values.put("pair_ns", Long.toString(pairNanos));
            boolean onPath = true;
            String actual = "tcp";
            if (shm) {
                int[] s = traceCounts(serverTrace);
                int[] k = traceCounts(clientTrace);
                values.put("server_path_events", Integer.toString(s[0]));
                values.put("server_shm_path_events", Integer.toString(s[1]));
                values.put("client_path_events", Integer.toString(k[0]));
                values.put("client_shm_path_events", Integer.toString(k[1]));
                onPath = s[1] >= 1 && k[1] >= 1;
                actual = onPath ? "shm" : "tcp (fell back)";
            }
            double ns = usec * 1000.0 / SAMPLE_ITERATIONS;
            FieldCase.Run run = new FieldCase.Run(path, pair, ns, Double.NaN, 1e9 / ns, onPath, actual, values,
                    (System.nanoTime() - start) / 1e9);
            progress(c, run);
            return run;
        } finally {
            end(client, server);
        }
    }

    /** Lines with {@code "hook":"path"}, and those of them with {@code "path":"shm"}, in a trace file. */
    static int[] traceCounts(Path trace) {
        int[] n = new int[2];
        if (!Files.isRegularFile(trace)) {
            return n;
        }
        try (Stream<String> lines = Files.lines(trace, StandardCharsets.UTF_8)) {
            lines.filter(l -> l.contains("\"hook\":\"path\"")).forEach(l -> {
                n[0]++;
                if (l.contains("\"path\":\"shm\"")) {
                    n[1]++;
                }
            });
        } catch (IOException | UncheckedIOException e) {
            throw new UncheckedIOException("cannot read trace " + trace,
                    e instanceof IOException io ? io : ((UncheckedIOException) e).getCause());
        }
        return n;
    }

    /** The demo's way to attach the agent: a conf file with one rule, tracing NET to a file. */
    private List<String> demoAgent(String name, Path trace, String rule) {
        Path conf = writeConf(name, "# sora field bench, sample-cold: the demo's rule\n" + rule + "\n");
        return List.of("-javaagent:" + o.agent.toAbsolutePath(), "-Dsora.conf=" + conf, "-Dsora.trace=iprint=NET",
                "-Dsora.trace.file=" + trace);
    }

    /** {@code -javaagent:JAR=conf=FILE} with the shm rule of one side plus the rule options. */
    private List<String> agentOption(String name, int port, boolean server) {
        String rule = Bench.rule("shm", server, LOOPBACK, Integer.toString(port), o.ruleOptions);
        Path conf = writeConf(name, "# sora field bench\n" + rule + "\n");
        return List.of("-javaagent:" + o.agent.toAbsolutePath() + "=conf=" + conf);
    }

    private Path writeConf(String name, String text) {
        Path conf = dir.resolve(name + ".conf");
        try {
            Files.writeString(conf, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + conf, e);
        }
        return conf;
    }

    /**
     * Starts a child JVM, pinned when {@code cpu >= 0}. A {@link ChildArgs} child ({@code childArgs})
     * gets {@code timeout=} for its watchdog unless its args carry one; any other (the samples) runs
     * under coreutils {@code timeout}, so even a driver killed with SIGKILL leaves nothing running.
     */
    private ChildProcess launch(String name, int cpu, List<String> jvmArgs, String main, List<String> args, boolean childArgs) {
        long bound = o.timeoutSeconds + READY_SECONDS + SERVER_EXIT_SECONDS;
        List<String> cmd = new ArrayList<>();
        if (cpu >= 0) {
            cmd.addAll(List.of("taskset", "-c", Integer.toString(cpu)));
        }
        if (!childArgs && timeoutExe != null) {
            cmd.addAll(List.of(timeoutExe, "-k", "5", Long.toString(bound)));
        }
        cmd.add(o.java);
        cmd.addAll(o.jvmArgs);
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(args);
        if (childArgs && args.stream().noneMatch(a -> a.startsWith("timeout="))) {
            cmd.add("timeout=" + bound);
        }
        ChildProcess c = ChildProcess.start(name, cmd, dir);
        live.add(c);
        children++;
        if (o.verbose) {
            System.out.println("    $ " + c.command());
        }
        return c;
    }

    private void end(ChildProcess... cs) {
        for (ChildProcess c : cs) {
            if (c != null) {
                c.kill();
                live.remove(c);
            }
        }
    }

    private void progress(FieldCase c, FieldCase.Run r) {
        StringBuilder b = new StringBuilder(Report.fmt("  pair %d/%d %-5s", r.pair(), o.pairs, r.path()));
        if (c.row.equals("sample-cold")) {
            b.append(Report.fmt(" %s µs per round trip (%s usec for %d)", Report.micros(r.medianNs()), r.values().get("usec"),
                    SAMPLE_ITERATIONS));
            if (r.path().equals("shm")) {
                b.append(r.onPath() ? ", trace: on shm" : ", trace: FELL BACK to tcp " + r.values());
            }
        } else {
            b.append(Report.fmt(" median %s µs, p99 %s µs", Report.micros(r.medianNs()), Report.micros(r.p99Ns())));
            if (c.throughput) {
                b.append(Report.fmt(", %.0f round trips/s", r.rtps()));
            }
            if (r.values().containsKey("first_ns")) {
                b.append(", first ").append(Report.micros(Double.parseDouble(r.values().get("first_ns")))).append(" µs");
            }
        }
        b.append(Report.fmt("  (%.1f s)", r.seconds()));
        System.out.println(b);
    }

    private static double num(ChildProcess child, Map<String, String> r, String key) {
        String v = r.get(key);
        try {
            return Double.parseDouble(v);
        } catch (NullPointerException | NumberFormatException e) {
            throw child.failure("RESULT has no number " + key + " (got " + v + ")");
        }
    }

    private static String describe(Placement p) {
        return p.pinned() ? "server cpu " + p.serverCpu() + ", client cpu " + p.clientCpu() : "no taskset";
    }

    private static long deadline(long seconds) {
        return System.nanoTime() + seconds * 1_000_000_000L;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    private synchronized void cleanUp() {
        live.forEach(ChildProcess::kill);
        if (shmDir != null) {
            shmDir.resolve("sora-field-" + ProcessHandle.current().pid() + "-floor").toFile().delete();
        }
        if (dir != null && !Boolean.getBoolean("sora.field.keep")) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                // a temp directory left behind is harmless
            }
        }
    }
}
