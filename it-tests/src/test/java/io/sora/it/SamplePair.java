package io.sora.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs the JSOR article's SampleServer and SampleClient as two JVMs, each with its own JVM arguments. */
final class SamplePair {
    final ForkedJvm server;
    final ForkedJvm client;
    final int serverExit;
    final int clientExit;

    private SamplePair(ForkedJvm server, ForkedJvm client, int serverExit, int clientExit) {
        this.server = server;
        this.client = client;
        this.serverExit = serverExit;
        this.clientExit = clientExit;
    }

    static SamplePair run(Path jdk, List<String> serverJvmArgs, List<String> clientJvmArgs, int iterations, int size)
            throws IOException, InterruptedException {
        int port = freePort();
        String cp = ForkedJvm.examplesJar().toString();
        String[] args = {"127.0.0.1", Integer.toString(port), Integer.toString(iterations), Integer.toString(size)};
        ForkedJvm server = ForkedJvm.start(jdk, serverJvmArgs, cp, "io.sora.examples.SampleServer", args);
        try {
            server.awaitLine("Server Ready>", 60_000);
            ForkedJvm client = ForkedJvm.start(jdk, clientJvmArgs, cp, "io.sora.examples.SampleClient", args);
            try {
                int c = client.await(120_000);
                int s = server.await(60_000);
                return new SamplePair(server, client, s, c);
            } finally {
                client.close();
            }
        } finally {
            server.close();
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static List<String> agent(String... options) {
        List<String> args = new ArrayList<>();
        String opts = String.join(",", options);
        args.add("-javaagent:" + ForkedJvm.agentJar() + (opts.isEmpty() ? "" : "=" + opts));
        return args;
    }

    /** The lines with what varies from run to run (ports, timings) masked. */
    static List<String> normalized(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            out.add(l.replaceAll(":\\d+", ":PORT").replaceAll("\\d+ usec", "N usec"));
        }
        return out;
    }

    String describe() {
        return "server exit " + serverExit + ": " + server.describe() + "\nclient exit " + clientExit + ": " + client.describe();
    }
}
