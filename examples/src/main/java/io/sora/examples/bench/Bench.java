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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * sora's benchmark driver. In one invocation it forks, for every path ({@link Route}) and
 * placement ({@link Placement}), a server JVM and a client JVM pinned with {@code taskset}, collects
 * each client's {@code RESULT} line, and prints the machine facts, a table and the ratios the
 * project's targets speak about. Targets are information: the exit status is 0 whenever every
 * child ran correctly, 1 when a child failed (wrong path, bad data, crash, timeout), 2 on bad options.
 *
 * <pre>java -cp sora-examples.jar io.sora.examples.bench.Bench --agent sora-agent.jar [--quick] [--out FILE.md]</pre>
 *
 * Single-threaded; a shutdown hook kills children still alive if the driver is interrupted.
 */
public final class Bench {
    private static final long READY_SECONDS = 60;
    private static final long SERVER_EXIT_SECONDS = 30;
    /** What the agent prints when part of it failed; an agent row with it would measure the wrong thing. */
    private static final String AGENT_ERROR = "[sora] ERROR";

    private final BenchOptions options;
    private final List<ChildProcess> live = new CopyOnWriteArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private Path dir;
    private int pairs;

    private Bench(BenchOptions options) {
        this.options = options;
    }

    public static void main(String[] argv) {
        BenchOptions o;
        try {
            o = BenchOptions.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("Bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (o.help) {
            System.out.println(BenchOptions.USAGE);
            return;
        }
        Bench bench = new Bench(o);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> bench.live.forEach(ChildProcess::kill), "bench-cleanup"));
        try {
            bench.run();
        } catch (ChildProcess.Failure f) {
            System.out.flush();
            System.err.println("Bench: ABORTED, a child failed: " + f.getMessage());
            System.exit(1);
        } catch (UncheckedIOException e) {
            System.err.println("Bench: ABORTED: " + e.getMessage() + ": " + e.getCause());
            System.exit(1);
        } catch (IllegalStateException e) {
            System.err.println("Bench: " + e.getMessage());
            System.exit(2);
        }
    }

    private void run() {
        Machine machine = Machine.describe(options.java);
        List<Placement> placements = placements(machine);
        List<Route> routes = routes();
        try {
            dir = Files.createTempDirectory("sora-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        notes.add("load average (1/5/15 min) at start: " + Machine.loadAverage());
        Report preview = new Report(machine, options, placements, notes, List.of());
        System.out.println("== sora benchmark");
        preview.header().forEach(h -> System.out.println("  " + h));
        System.out.println("\n== running " + routes.size() * placements.size() + " pairs of JVMs");
        List<Measurement> results = new ArrayList<>();
        for (Placement p : placements) {
            for (Route r : routes) {
                results.add(runPair(r, p, routes.size() * placements.size()));
            }
        }
        notes.add("load average (1/5/15 min) at end: " + Machine.loadAverage());
        Report report = new Report(machine, options, placements, notes, results);
        System.out.println();
        System.out.print(report.text());
        if (options.out != null) {
            try {
                Files.writeString(options.out, report.markdown(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write --out " + options.out, e);
            }
            System.out.println("\nMarkdown written to " + options.out);
        }
        deleteTree(dir);
    }

    private List<Placement> placements(Machine m) {
        List<Integer> cpus = m.cpusAllowed();
        List<Placement> out = new ArrayList<>();
        if (!m.canPin()) {
            notes.add("taskset (util-linux) not found: both processes run unpinned, placement is up to the scheduler");
            out.add(new Placement("unpinned", -1, -1));
            return out;
        }
        for (String label : options.placements) {
            if (label.equals("split")) {
                if (cpus.size() < 2) {
                    notes.add("only one usable CPU " + cpus + ": the split placement is skipped");
                    continue;
                }
                out.add(new Placement("split", cpus.get(1), cpus.get(0)));
            } else {
                out.add(new Placement("same", cpus.get(0), cpus.get(0)));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no placement left to run (--placements " + options.placements + ")");
        }
        return out;
    }

    private List<Route> routes() {
        List<Route> out = new ArrayList<>(options.routes);
        boolean haveAgent = options.agent != null && Files.isRegularFile(options.agent);
        if (!haveAgent && out.removeIf(r -> r.agent)) {
            notes.add(options.agent == null ? "no --agent given: the tcp+agent and shm rows are skipped"
                    : "agent jar " + options.agent + " not found: the tcp+agent and shm rows are skipped");
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no path left to run: " + String.join("; ", notes));
        }
        return out;
    }

    private Measurement runPair(Route route, Placement placement, int total) {
        pairs++;
        String tag = route.label.replace('+', '-') + "-" + placement.label();
        long start = System.nanoTime();
        ChildProcess server = null;
        ChildProcess client = null;
        String file = route == Route.FLOOR ? floorFile(tag) : null;
        try {
            if (route == Route.FLOOR) {
                server = launch(tag + "-server", placement.serverCpu(), List.of(), FloorPingPong.class,
                        List.of("role=server", "file=" + file, "size=" + options.size));
                server.awaitLine("READY", deadline(READY_SECONDS));
                client = launch(tag + "-client", placement.clientCpu(), List.of(), FloorPingPong.class,
                        List.of("role=client", "file=" + file, "size=" + options.size, "warmup=" + options.warmup,
                                "reps=" + options.reps, "iterations=" + options.iterations));
            } else {
                int port = freePort();
                server = launch(tag + "-server", placement.serverCpu(), agentArgs(route, tag + "-server", port, true),
                        BenchServer.class, List.of("port=" + port, "path=" + path(route), "agent=" + yes(route.agent)));
                server.awaitLine("READY", deadline(READY_SECONDS));
                client = launch(tag + "-client", placement.clientCpu(), agentArgs(route, tag + "-client", port, false),
                        BenchClient.class, clientArgs(route, port));
            }
            client.awaitExit(deadline(options.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            if (route.agent) {
                server.checkStderrFree(AGENT_ERROR);
                client.checkStderrFree(AGENT_ERROR);
            }
            Measurement m = new Measurement(route, placement, client.result());
            if (!path(route).equals(m.values().get("path"))) {
                throw client.failure("reported path=" + m.values().get("path") + ", expected " + path(route));
            }
            progress(m, total, start);
            return m;
        } finally {
            for (ChildProcess c : new ChildProcess[] {client, server}) {
                if (c != null) {
                    c.kill();
                    live.remove(c);
                }
            }
            if (file != null) {
                Path.of(file).toFile().delete(); // the server deletes it too, unless it died
            }
        }
    }

    private List<String> clientArgs(Route route, int port) {
        long stream = route.streams ? options.streamBytes() : 0;
        return List.of("port=" + port, "path=" + path(route), "agent=" + yes(route.agent), "size=" + options.size,
                "warmup=" + options.warmup, "reps=" + options.reps, "iterations=" + options.iterations,
                "stream-bytes=" + stream, "stream-chunk=" + options.streamChunk, "stream-reps=" + options.streamReps);
    }

    /** The agent's JVM option with a rule file: matching the port for shm, naming another port for tcp+agent. */
    private List<String> agentArgs(Route route, String name, int port, boolean server) {
        if (!route.agent) {
            return List.of();
        }
        int rulePort = route == Route.SHM ? port : port == 65535 ? port - 1 : port + 1;
        String rule = rule(server, Integer.toString(rulePort), options.ruleOptions);
        Path conf = dir.resolve(name + ".conf");
        try {
            Files.writeString(conf, "# sora bench, " + route.meaning + "\n" + rule + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + conf, e);
        }
        String extra = options.agentOptions == null ? "" : "," + options.agentOptions;
        return List.of("-javaagent:" + options.agent.toAbsolutePath() + "=conf=" + conf + extra);
    }

    /** The rule line each side gets; also printed, with PORT for the port, in the header. */
    static String rule(boolean server, String port, String ruleOptions) {
        String r = server ? "shm accept 127.0.0.1 " + port + " 127.0.0.1" : "shm connect 127.0.0.1 " + port;
        return ruleOptions.isEmpty() ? r : r + " " + ruleOptions;
    }

    private ChildProcess launch(String name, int cpu, List<String> jvmArgs, Class<?> main, List<String> args) {
        List<String> cmd = new ArrayList<>();
        if (cpu >= 0) {
            cmd.addAll(List.of("taskset", "-c", Integer.toString(cpu)));
        }
        cmd.add(options.java);
        cmd.addAll(options.jvmArgs);
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(args);
        cmd.add("timeout=" + (options.timeoutSeconds + READY_SECONDS + SERVER_EXIT_SECONDS));
        ChildProcess c = ChildProcess.start(name, cmd, dir);
        live.add(c);
        if (options.verbose) {
            System.out.println("    $ " + c.command());
        }
        return c;
    }

    private void progress(Measurement m, int total, long start) {
        StringBuilder b = new StringBuilder(Report.fmt("  [%d/%d] %-9s %-8s rtt median %s us, p99 %s us",
                pairs, total, m.route().label, m.placement().label(), Report.micros(m.rttMedianNs()),
                Report.micros(m.get("rtt_p99_ns"))));
        if (!Double.isNaN(m.streamBytesPerSecond())) {
            b.append(Report.fmt(", stream %.2f GB/s", m.streamBytesPerSecond() / 1e9));
        }
        b.append(Report.fmt("  (%.1f s)", (System.nanoTime() - start) / 1e9));
        System.out.println(b);
    }

    private String floorFile(String tag) {
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : dir;
        if (base == dir && notes.stream().noneMatch(n -> n.startsWith("/dev/shm"))) {
            notes.add("/dev/shm is not writable: the floor maps a file in " + dir);
        }
        return base.resolve("sora-bench-" + ProcessHandle.current().pid() + "-" + tag).toString();
    }

    private static String path(Route r) {
        return r == Route.SHM ? "shm" : r == Route.FLOOR ? "floor" : "tcp";
    }

    private static String yes(boolean b) {
        return b ? "yes" : "no";
    }

    private static long deadline(long seconds) {
        return System.nanoTime() + seconds * 1_000_000_000L;
    }

    /** A loopback port free right now (the server binds it a moment later; a clash fails loudly). */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // leaving a temp directory behind is harmless
        }
    }
}
