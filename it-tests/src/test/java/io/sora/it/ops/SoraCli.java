package io.sora.it.ops;

import io.sora.it.ForkedJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code jdk/bin/java -jar sora-agent.jar <args>} and keeps what it printed. */
final class SoraCli {
    final int exit;
    final String out;
    final String err;
    private final String command;

    private SoraCli(int exit, String out, String err, String command) {
        this.exit = exit;
        this.out = out;
        this.err = err;
        this.command = command;
    }

    static SoraCli run(Path jdk, String... args) throws IOException, InterruptedException {
        return runJar(jdk, ForkedJvm.agentJar(), args);
    }

    /** As {@link #run}, with the agent jar at {@code jar}. */
    static SoraCli runJar(Path jdk, Path jar, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(), "-jar", jar.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        Path outFile = java.nio.file.Files.createTempFile("sora-cli", ".out");
        Path errFile = java.nio.file.Files.createTempFile("sora-cli", ".err");
        pb.redirectOutput(outFile.toFile());
        pb.redirectError(errFile.toFile());
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", cmd));
        }
        String out = java.nio.file.Files.readString(outFile, StandardCharsets.UTF_8);
        String err = java.nio.file.Files.readString(errFile, StandardCharsets.UTF_8);
        java.nio.file.Files.deleteIfExists(outFile);
        java.nio.file.Files.deleteIfExists(errFile);
        return new SoraCli(p.exitValue(), out, err, String.join(" ", cmd));
    }

    /** The rows of a status table, split into columns (ID SIDE LOCAL REMOTE PATH SENT RECEIVED AGE STATE REASON). */
    List<String[]> rows() {
        List<String[]> rows = new ArrayList<>();
        boolean table = false;
        for (String line : out.split("\n")) {
            if (line.startsWith("ID ")) {
                table = true;
            } else if (table && !line.isBlank()) {
                rows.add(line.trim().split("\\s{2,}", 10));
            }
        }
        return rows;
    }

    /** The row whose LOCAL or REMOTE is {@code address}; fails when there is none. */
    String[] row(String address) {
        for (String[] r : rows()) {
            if (r[2].equals(address) || r[3].equals(address)) {
                return r;
            }
        }
        throw new AssertionError("no connection " + address + " in\n" + this);
    }

    @Override
    public String toString() {
        return command + "\nexit " + exit + "\nstdout:\n" + out + "stderr:\n" + err;
    }
}
