package io.sora.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** A real JVM started for a test (the OpenTelemetry agent's pattern): output captured, every wait bounded. */
public final class ForkedJvm implements AutoCloseable {
    private final Process process;
    private final List<String> out = new CopyOnWriteArrayList<>();
    private final List<String> err = new CopyOnWriteArrayList<>();
    private final String description;

    private ForkedJvm(Process process, String description) {
        this.process = process;
        this.description = description;
        pump(process.getInputStream(), out);
        pump(process.getErrorStream(), err);
    }

    /** {@code @MethodSource(ForkedJvm.JDKS)}: a test parameterised by {@link #jdks()}. */
    public static final String JDKS = "io.sora.it.ForkedJvm#jdks";

    /** The JDKs to test on: every entry of -Dsora.test.jdks that exists here (at least the running one). */
    public static List<Path> jdks() {
        List<Path> listed = Arrays.stream(System.getProperty("sora.test.jdks", "").split(","))
                .filter(s -> !s.isBlank())
                .map(Path::of)
                .collect(Collectors.toList());
        List<Path> found = listed.stream().filter(p -> Files.isExecutable(p.resolve("bin/java"))).collect(Collectors.toList());
        if (found.isEmpty()) {
            found.add(Path.of(System.getProperty("java.home")));
        }
        if (!reported) {
            reported = true;
            List<Path> missing = listed.stream().filter(p -> !found.contains(p)).collect(Collectors.toList());
            System.out.println("[forked-JVM tests] JDKs: " + found + (missing.isEmpty() ? "" : "; missing, skipped: " + missing));
        }
        return found;
    }

    private static volatile boolean reported;

    /** The JDK's feature version, from its {@code release} file ({@code JAVA_VERSION="17.0.15"}). */
    public static int featureVersion(Path jdk) throws java.io.IOException {
        for (String line : Files.readAllLines(jdk.resolve("release"))) {
            if (line.startsWith("JAVA_VERSION=")) {
                String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                return Integer.parseInt(v.split("[.+-]")[0]);
            }
        }
        throw new IllegalStateException("no JAVA_VERSION in " + jdk.resolve("release"));
    }

    public static Path agentJar() {
        Path p = Path.of(System.getProperty("sora.agent.jar", "../agent/target/sora-agent.jar"));
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("agent jar " + p + " missing: run 'mvn package' first");
        }
        return p.toAbsolutePath();
    }

    public static Path examplesJar() {
        return Path.of(System.getProperty("sora.examples.jar", "../examples/target/sora-examples.jar")).toAbsolutePath();
    }

    public static Path testClasses() {
        return Path.of(System.getProperty("sora.test.classes", "target/test-classes")).toAbsolutePath();
    }

    /**
     * The test classes and the jars of this test run's class path whose file names start with
     * {@code jarPrefix} (a third-party program's, e.g. {@code "netty-"}), as a forked JVM's class path.
     * Surefire names its class path in {@code surefire.test.class.path} (the JVM's own is a manifest jar).
     */
    public static String testClassesWith(String jarPrefix) {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        StringBuilder out = new StringBuilder(testClasses().toString());
        int jars = 0;
        for (String entry : cp.split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry);
            if (p.getFileName() != null && p.getFileName().toString().startsWith(jarPrefix) && entry.endsWith(".jar")) {
                out.append(java.io.File.pathSeparator).append(p.toAbsolutePath());
                jars++;
            }
        }
        if (jars == 0) throw new IllegalStateException("no " + jarPrefix + "*.jar on the test class path: " + cp);
        return out.toString();
    }

    /**
     * Starts {@code jdk/bin/java [jvmArgs] -cp classpath mainClass args}.
     * Pass {@code -javaagent:...} and {@code -D...} in jvmArgs.
     */
    public static ForkedJvm start(Path jdk, List<String> jvmArgs, String classpath, String mainClass, String... args)
            throws IOException {
        return launch(List.of(), jdk, jvmArgs, classpath, mainClass, args);
    }

    /**
     * As {@link #start}, with the JVM's limit on open file descriptors ({@code RLIMIT_NOFILE}, soft and
     * hard) set to {@code nofile} first, through {@code sh -c 'ulimit -n N && exec java ...'}.
     */
    public static ForkedJvm startWithFileLimit(int nofile, Path jdk, List<String> jvmArgs, String classpath,
                                               String mainClass, String... args) throws IOException {
        return launch(List.of("sh", "-c", "ulimit -n " + nofile + " && exec \"$@\"", "sh"), jdk, jvmArgs, classpath,
                mainClass, args);
    }

    /** As {@link #start}, in network namespace {@code netns} ({@code ip netns exec NETNS java ...}; needs root). */
    public static ForkedJvm startInNetworkNamespace(String netns, Path jdk, List<String> jvmArgs, String classpath,
                                                    String mainClass, String... args) throws IOException {
        return launch(List.of("ip", "netns", "exec", netns), jdk, jvmArgs, classpath, mainClass, args);
    }

    /** {@code prefix jdk/bin/java jvmArgs -cp classpath mainClass args}, without JAVA_TOOL_OPTIONS. */
    private static ForkedJvm launch(List<String> prefix, Path jdk, List<String> jvmArgs, String classpath, String mainClass,
                                    String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(jdk.resolve("bin/java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        return new ForkedJvm(pb.start(), String.join(" ", cmd));
    }

    private static void pump(java.io.InputStream s, List<String> sink) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(s, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    sink.add(line);
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "forked-jvm-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Waits until stdout has a line equal to {@code line}; fails with everything printed so far. */
    public void awaitLine(String line, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!out.contains(line)) {
            if (System.nanoTime() > deadline || !process.isAlive() && !out.contains(line)) {
                if (out.contains(line)) {
                    return;
                }
                throw new AssertionError("no line '" + line + "' from " + description + "\nstdout: " + out + "\nstderr: " + err);
            }
            Thread.sleep(5);
        }
    }

    /** Waits for exit (killing the process on timeout) and returns the exit code. */
    public int await(long timeoutMillis) throws InterruptedException {
        if (!process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
            throw new AssertionError("timed out after " + timeoutMillis + " ms: " + description + "\nstdout: " + out + "\nstderr: " + err);
        }
        // let the pumps drain
        for (int i = 0; i < 100; i++) {
            Thread.sleep(2);
        }
        return process.exitValue();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public List<String> stdout() {
        return List.copyOf(out);
    }

    public List<String> stderr() {
        return List.copyOf(err);
    }

    public Process process() {
        return process;
    }

    public String describe() {
        return description + "\nstdout: " + out + "\nstderr: " + err;
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
