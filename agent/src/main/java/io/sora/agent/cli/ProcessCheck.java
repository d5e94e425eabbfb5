package io.sora.agent.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code /proc} says about a process before anything is sent to it: an attach sends SIGQUIT to a
 * JVM that has not opened its attach listener yet, which kills a process that is not a JVM and makes a
 * JVM with {@code -XX:+DisableAttachMechanism} print a thread dump. So the checks come first, each
 * failing with the message the operator needs.
 */
final class ProcessCheck {
    private final Path proc;

    ProcessCheck(Path proc) {
        this.proc = proc;
    }

    /** Checks the live system's {@code /proc}. */
    static ProcessCheck system() {
        return new ProcessCheck(Path.of("/proc"));
    }

    /**
     * Passes when {@code pid} is a JVM of this user (or this user is root) that allows attach.
     *
     * @throws CliException naming the problem: no such process, another user's, not a JVM, attach disabled
     */
    void check(long pid) throws CliException {
        Path dir = proc.resolve(Long.toString(pid));
        if (!Files.isDirectory(dir)) {
            throw CliException.failed("no JVM with pid " + pid + " (there is no process " + pid + ")");
        }
        checkOwner(pid, dir);
        String comm = read(dir.resolve("comm")).trim();
        // Positive evidence only: an attach signals the process, which must not hit anything but a JVM.
        String maps = read(dir.resolve("maps"));
        if (maps.isEmpty()) {
            throw CliException.failed("cannot tell whether process " + pid + " (" + comm + ") is a JVM: its memory map "
                    + dir.resolve("maps") + " is not readable by " + System.getProperty("user.name") + "; run this command as its user");
        }
        if (!maps.contains("/libjvm.so")) {
            throw CliException.failed("no JVM with pid " + pid + ": process " + pid + " (" + comm + ") is not a Java VM");
        }
        if (attachDisabled(dir)) {
            throw CliException.failed("JVM " + pid + " was started with -XX:+DisableAttachMechanism, so it accepts no"
                    + " attach; restart it without that flag, or start it with -javaagent:sora-agent.jar instead");
        }
    }

    private void checkOwner(long pid, Path dir) throws CliException {
        try {
            int owner = (Integer) Files.getAttribute(dir, "unix:uid");
            int me = (Integer) Files.getAttribute(proc.resolve("self"), "unix:uid");
            if (owner != me && me != 0) {
                String ownerName = Files.getOwner(dir).getName();
                throw CliException.failed("JVM " + pid + " belongs to user " + ownerName + " (uid " + owner + "), you are "
                        + System.getProperty("user.name") + " (uid " + me + "): a JVM accepts an attach only from its own"
                        + " user; run this command as " + ownerName + ", e.g. sudo -u " + ownerName + " java -jar sora-agent.jar ...");
            }
        } catch (IOException | UnsupportedOperationException | ClassCastException e) {
            // no unix attributes here: the attach itself will say what is wrong
        }
    }

    /** The last -XX:[+-]DisableAttachMechanism wins, as in the JVM: JAVA_TOOL_OPTIONS, command line, _JAVA_OPTIONS. */
    private boolean attachDisabled(Path dir) {
        List<String> tokens = new ArrayList<>();
        List<String> env = split(read(dir.resolve("environ")));
        tokens.addAll(envTokens(env, "JAVA_TOOL_OPTIONS="));
        tokens.addAll(envTokens(env, "JDK_JAVA_OPTIONS="));
        tokens.addAll(split(read(dir.resolve("cmdline"))));
        tokens.addAll(envTokens(env, "_JAVA_OPTIONS="));
        boolean disabled = false;
        for (String t : tokens) {
            if (t.equals("-XX:+DisableAttachMechanism")) {
                disabled = true;
            } else if (t.equals("-XX:-DisableAttachMechanism")) {
                disabled = false;
            }
        }
        return disabled;
    }

    private static List<String> envTokens(List<String> env, String prefix) {
        List<String> out = new ArrayList<>();
        for (String e : env) {
            if (e.startsWith(prefix)) {
                for (String t : e.substring(prefix.length()).trim().split("\\s+")) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    private static List<String> split(String nulSeparated) {
        List<String> out = new ArrayList<>();
        for (String s : nulSeparated.split("\0")) {
            if (!s.isEmpty()) {
                out.add(s);
            }
        }
        return out;
    }

    /** The file's text, or "" when it cannot be read (another user's environ, a process that just ended). */
    private static String read(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException | SecurityException e) {
            return "";
        }
    }
}
