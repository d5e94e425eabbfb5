package io.sora.it.reliability;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Shared by the reliability tests: agent arguments, rule files, output and trace lookups. */
final class Reliability {
    static final String APPS = "io.sora.it.reliability.apps.";

    private Reliability() {
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static String cp() {
        return ForkedJvm.testClasses().toString();
    }

    /** A rules file in {@code dir} with the given lines. */
    static Path conf(Path dir, String name, String... lines) throws IOException {
        return Files.writeString(dir.resolve(name), String.join("\n", lines) + "\n");
    }

    /**
     * The rendezvous socket a sora listener for {@code port} has in {@code priv} (its {@code sora-<user>}
     * directory), as docs/shm.md names it: {@code port-<port>.net<network namespace>.sock}, the namespace
     * this test JVM's children share with it ({@code /proc/self/ns/net}).
     */
    static Path rendezvousSocket(Path priv, int port) throws IOException {
        String ns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString(); // net:[4026531840]
        return priv.resolve("port-" + port + ".net" + ns.substring(ns.indexOf('[') + 1, ns.indexOf(']')) + ".sock");
    }

    /** Rules that pair every loopback connection of a JVM on shm, both as client and as server. */
    static Path loopbackConf(Path dir) throws IOException {
        return conf(dir, "loopback.conf", "shm accept 127.0.0.1 * 127.0.0.1 wait=2s", "shm connect 127.0.0.1 * wait=2s");
    }

    /**
     * JVM arguments: the agent with {@code conf} (none: the agent without rules), shm files under
     * {@code shmDir}, and a JSON-lines trace of NET and JSOR to {@code trace} when not null.
     */
    static List<String> agent(Path conf, Path shmDir, Path trace) {
        List<String> args = new ArrayList<>();
        args.add("-javaagent:" + ForkedJvm.agentJar() + (conf == null ? "" : "=conf=" + conf));
        args.add("-Dsora.shm.dir=" + shmDir);
        if (trace != null) {
            args.add("-Dsora.trace=iprint=NET,iprint=JSOR");
            args.add("-Dsora.trace.file=" + trace);
        }
        return args;
    }

    /** The rest of the first stdout line that starts with {@code key + " "}. */
    static Optional<String> value(ForkedJvm jvm, String key) {
        return jvm.stdout().stream().filter(l -> l.startsWith(key + " ")).map(l -> l.substring(key.length() + 1)).findFirst();
    }

    static String require(ForkedJvm jvm, String key) {
        return value(jvm, key).orElseThrow(() -> new AssertionError("no line '" + key + " ...' from " + jvm.describe()));
    }

    /** The NET.462 path events of a JSON-lines trace. */
    static List<String> pathEvents(Path trace) throws IOException {
        if (!Files.exists(trace)) return List.of();
        return Files.readAllLines(trace).stream().filter(l -> l.contains("\"cat\":\"NET\"") && l.contains("\"id\":462")).toList();
    }

    static String jdkName(Path jdk) {
        return jdk.getFileName().toString();
    }
}
