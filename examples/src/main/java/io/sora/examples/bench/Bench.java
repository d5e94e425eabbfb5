package io.sora.examples.bench;

import java.io.File;
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
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * sora's benchmark driver. In one invocation it forks, for every path ({@link Route}) and placement
 * ({@link Placement}), a server JVM and a client JVM pinned with {@code taskset}, which run a
 * ping-pong sweep over message sizes, a streaming sweep over write sizes and a file copy; it then
 * times JVM start-up with and without the agent, prints the machine facts, tables and the ratios the
 * project's targets speak about, and writes {@code results.json} and {@code report.md} (and, through
 * {@code tools/bench/charts.sh}, the charts) to the report directory. Targets are information: the
 * exit status is 0 whenever every child ran correctly, 1 when a child failed (wrong path, bad data,
 * crash, timeout), 2 on bad options.
 *
 * <pre>java -cp sora-examples.jar io.sora.examples.bench.Bench --agent sora-agent.jar [--quick] [--report DIR]</pre>
 *
 * Single-threaded; a shutdown hook kills children still alive if the driver is interrupted.
 */
public final class Bench {
    private static final long READY_SECONDS = 60;
    private static final long SERVER_EXIT_SECONDS = 30;
    private static final String LOOPBACK = "127.0.0.1";
    /** What the agent prints when part of it failed; an agent row with it would measure the wrong thing. */
    private static final String AGENT_ERROR = "[sora] ERROR";

    private final BenchOptions options;
    private final List<ChildProcess> live = new CopyOnWriteArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private Path dir;
    private Path shmDir;
    private CopySource copySource;
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
        // also on Ctrl-C or kill: no child and no 512 MiB file in /dev/shm may outlive the driver
        Runtime.getRuntime().addShutdownHook(new Thread(bench::cleanUp, "bench-cleanup"));
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
        long started = System.nanoTime();
        Machine machine = Machine.describe(options.java);
        List<Placement> placements = placements(machine);
        List<Route> routes = routes();
        try {
            dir = Files.createTempDirectory("sora-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        shmDir = shmDir();
        notes.add("load average (1/5/15 min) at start: " + Machine.loadAverage());
        System.out.println("== sora benchmark");
        new Report(machine, options, placements, notes, List.of(), null).header().forEach(h -> System.out.println("  " + h));
        if (options.copyMib > 0 && routes.stream().anyMatch(r -> r.streams)) {
            long t0 = System.nanoTime();
            copySource = CopySource.create(shmDir.resolve("sora-bench-" + ProcessHandle.current().pid() + "-copy-src"),
                    options.copyBytes());
            System.out.printf("%n== copy source: %s, %s, CRC-32C %x (made in %.1f s)%n", copySource.file(),
                    Sweep.label(copySource.bytes()), copySource.crc(), (System.nanoTime() - t0) / 1e9);
        }
        int total = routes.size() * placements.size();
        System.out.println("\n== running " + total + " pairs of JVMs");
        List<Measurement> results = new ArrayList<>();
        for (Placement p : placements) {
            for (Route r : routes) {
                results.add(runPair(r, p, total));
            }
        }
        Startup.Result startup = null;
        if (options.startupRuns > 0) {
            System.out.println("\n== JVM start-up, " + options.startupRuns + " runs each, with and without the agent");
            startup = Startup.measure(options.java, options.jvmArgs,
                    options.agent != null && Files.isRegularFile(options.agent) ? agentOption(Route.TCP_AGENT, "startup", 1, null) : null,
                    options.startupRuns);
        }
        notes.add("load average (1/5/15 min) at end: " + Machine.loadAverage());
        notes.add(Report.fmt("the run took %.0f s", (System.nanoTime() - started) / 1e9));
        Report report = new Report(machine, options, placements, notes, results, startup);
        System.out.println();
        System.out.print(report.text());
        if (options.report != null) {
            ReportFiles.write(options.report, report, options);
        }
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

    /** The requested routes this machine can run; each one dropped leaves a note saying why. */
    private List<Route> routes() {
        List<Route> out = new ArrayList<>(options.routes);
        boolean haveAgent = options.agent != null && Files.isRegularFile(options.agent);
        if (!haveAgent && out.removeIf(Route::agent)) {
            notes.add(options.agent == null ? "no --agent given: the agent rows are skipped"
                    : "agent jar " + options.agent + " not found: the agent rows are skipped");
        }
        if (out.contains(Route.RDMA)) {
            String[] devices = new File("/sys/class/infiniband").list();
            if (devices == null || devices.length == 0) {
                out.remove(Route.RDMA);
                notes.add("rdma skipped: /sys/class/infiniband lists no RDMA device on this machine");
            } else if (options.rdmaAddress == null) {
                out.remove(Route.RDMA);
                notes.add("rdma skipped: device(s) " + String.join(", ", devices)
                        + " present, but no --rdma-address (the IP of the device's interface) was given");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no path left to run: " + String.join("; ", notes));
        }
        return out;
    }

    private Measurement runPair(Route route, Placement placement, int total) {
        pairs++;
        String tag = route.key.replace('+', '-') + "-" + placement.label();
        long start = System.nanoTime();
        ChildProcess server = null;
        ChildProcess client = null;
        String file = route == Route.FLOOR ? shmDir.resolve("sora-bench-" + ProcessHandle.current().pid() + "-" + tag).toString() : null;
        Path copyDst = shmDir.resolve("sora-bench-" + ProcessHandle.current().pid() + "-copy-dst");
        try {
            if (route == Route.FLOOR) {
                server = launch(tag + "-server", placement.serverCpu(), List.of(), FloorPingPong.class,
                        List.of("role=server", "file=" + file, "pp-sizes=" + join(options.sizes)));
                server.awaitLine("READY", deadline(READY_SECONDS));
                List<String> args = new ArrayList<>(List.of("role=client", "file=" + file));
                args.addAll(pingPongArgs(route));
                client = launch(tag + "-client", placement.clientCpu(), List.of(), FloorPingPong.class, args);
            } else {
                int port = freePort();
                String address = route == Route.RDMA ? options.rdmaAddress : LOOPBACK;
                server = launch(tag + "-server", placement.serverCpu(), agentArgs(route, tag + "-server", port, true),
                        BenchServer.class, List.of("address=" + address, "port=" + port, "path=" + route.expectedPath(),
                                "agent=" + yes(route.agent()), "copy-dst=" + copyDst));
                server.awaitLine("READY", deadline(READY_SECONDS));
                client = launch(tag + "-client", placement.clientCpu(), agentArgs(route, tag + "-client", port, false),
                        BenchClient.class, clientArgs(route, address, port));
            }
            client.awaitExit(deadline(options.timeoutSeconds));
            server.awaitExit(deadline(SERVER_EXIT_SECONDS));
            if (route.agent()) {
                server.checkStderrFree(AGENT_ERROR);
                client.checkStderrFree(AGENT_ERROR);
            }
            Measurement m = new Measurement(route, placement, client.result());
            if (!route.expectedPath().equals(m.values().get("path"))) {
                throw client.failure("reported path=" + m.values().get("path") + ", expected " + route.expectedPath());
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
                new File(file).delete(); // the server deletes it too, unless it died
            }
            copyDst.toFile().delete();
        }
    }

    private List<String> pingPongArgs(Route route) {
        return List.of("pp-sizes=" + (route.pingPong ? join(options.sizes) : ""), "pp-iterations=" + options.iterations,
                "pp-bytes=" + options.ppBytes(), "warmup=" + options.warmup, "reps=" + options.reps);
    }

    private List<String> clientArgs(Route route, String address, int port) {
        List<String> args = new ArrayList<>(List.of("address=" + address, "port=" + port, "path=" + route.expectedPath(),
                "agent=" + yes(route.agent())));
        args.addAll(pingPongArgs(route));
        args.addAll(List.of("st-sizes=" + (route.streams ? join(options.writeSizes) : ""), "st-reps=" + options.streamReps,
                "st-target-ms=" + options.streamMs, "st-max-bytes=" + options.streamMaxBytes()));
        boolean copy = route.streams && copySource != null;
        args.addAll(List.of("copy-file=" + (copy ? copySource.file().toString() : ""),
                "copy-bytes=" + (copy ? copySource.bytes() : 0), "copy-crc=" + (copy ? Long.toHexString(copySource.crc()) : "0"),
                "copy-reps=" + options.copyReps, "copy-chunk=" + options.copyChunk));
        return args;
    }

    /** The agent's JVM option for a route's child, or none for a route without agent. */
    private List<String> agentArgs(Route route, String name, int port, boolean server) {
        return route.agent() ? List.of(agentOption(route, name, port, server)) : List.of();
    }

    /**
     * {@code -javaagent:JAR=conf=FILE} with the rule of one side ({@code server} null: both), naming the
     * connection's own port when the route should match, another port (so nothing matches) for {@code tcp+agent}.
     */
    private String agentOption(Route route, String name, int port, Boolean server) {
        int rulePort = route.matches() ? port : port == 65535 ? port - 1 : port + 1;
        String address = route == Route.RDMA ? options.rdmaAddress : LOOPBACK;
        String provider = route.matches() ? route.provider : "shm";
        String options = ruleOptions(route);
        String p = Integer.toString(rulePort);
        String rules = (server == null || server ? rule(provider, true, address, p, options) + "\n" : "")
                + (server == null || !server ? rule(provider, false, address, p, options) + "\n" : "");
        Path conf = dir.resolve(name + ".conf");
        try {
            Files.writeString(conf, "# sora bench, " + route.meaning + "\n" + rules, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + conf, e);
        }
        String extra = this.options.agentOptions == null ? "" : "," + this.options.agentOptions;
        return "-javaagent:" + this.options.agent.toAbsolutePath() + "=conf=" + conf + extra;
    }

    /** The route's own rule options followed by the user's {@code --rule-options}. */
    String ruleOptions(Route route) {
        return (route.ruleOptions + " " + options.ruleOptions).trim();
    }

    /** One rule line, as printed (with PORT for the port) in the header. */
    static String rule(String provider, boolean server, String address, String port, String ruleOptions) {
        String r = server ? provider + " accept " + address + " " + port + " " + address
                : provider + " connect " + address + " " + port;
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
        StringBuilder b = new StringBuilder(Report.fmt("  [%d/%d] %-24s", pairs, total, m.name()));
        int headline = Report.closest(options.sizes, 4096);
        if (m.route().pingPong) {
            b.append(Report.fmt(" rtt(%s) %s us", Sweep.label(headline), Report.micros(m.rttMedianNs(headline))));
        }
        if (m.route().streams) {
            int w = Report.closest(options.writeSizes, 65536);
            b.append(Report.fmt(", stream(%s) %s MB/s", Sweep.label(w), Report.mbps(m.streamBps(w))));
            if (!Double.isNaN(m.copy("bps"))) {
                b.append(Report.fmt(", copy %s MB/s", Report.mbps(m.copy("bps"))));
            }
        }
        b.append(Report.fmt("  (%.1f s)", (System.nanoTime() - start) / 1e9));
        System.out.println(b);
    }

    private Path shmDir() {
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm;
        }
        notes.add("/dev/shm is not writable: the floor and the copy files live in " + dir);
        return dir;
    }

    private synchronized void cleanUp() {
        live.forEach(ChildProcess::kill);
        if (copySource != null) {
            copySource.file().toFile().delete();
        }
        if (shmDir != null) {
            shmDir.resolve("sora-bench-" + ProcessHandle.current().pid() + "-copy-dst").toFile().delete();
        }
        if (dir != null) {
            deleteTree(dir);
        }
    }

    static String join(int[] sizes) {
        return IntStream.of(sizes).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    private static String yes(boolean b) {
        return b ? "yes" : "no";
    }

    private static long deadline(long seconds) {
        return System.nanoTime() + seconds * 1_000_000_000L;
    }

    /** A loopback port free right now (the server binds it a moment later; a clash fails loudly). */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
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
