package io.sora.agent.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CliTest {
    /** What one command line printed and returned. */
    record Run(int exit, String out, String err) {}

    static Run cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Cli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void noArgumentsIsAUsageErrorListingTheCommands() {
        Run r = cli();
        assertEquals(2, r.exit());
        for (String c : new String[] {"attach <pid> [options]", "detach <pid>", "status <pid>", "verify <trace>", "doctor"}) {
            assertTrue(r.err().contains(c), r.err());
        }
    }

    @Test
    void helpListsTheCommandsOnStdout() {
        Run r = cli("--help");
        assertEquals(0, r.exit());
        assertTrue(r.out().startsWith("usage: java -jar sora-agent.jar <command>"), r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"attach", "detach", "status", "verify", "doctor"})
    void everyCommandHasItsOwnHelp(String command) {
        Run r = cli(command, "--help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("usage: java -jar sora-agent.jar " + command), r.out());
        assertEquals(r.out(), cli("help", command).out());
    }

    @Test
    void anUnknownCommandIsNamed() {
        Run r = cli("attack", "12");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("unknown command 'attack'"), r.err());
    }

    @Test
    void aBadPidIsNamedWithTheUsage() {
        Run r = cli("attach", "12x");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("pid must be a positive integer, found '12x'"), r.err());
        assertTrue(r.err().contains("usage: java -jar sora-agent.jar attach <pid> [options]"), r.err());
        assertEquals(2, cli("status").exit());
        assertTrue(cli("status").err().contains("missing <pid>"));
        assertTrue(cli("detach", "1", "2").err().contains("too many arguments [2]"));
        assertTrue(cli("attach", "1", "conf=a", "trace=b").err().contains("separate agent options with commas"));
    }

    @Test
    void aMissingProcessIsNamed() {
        long pid = 4_000_000;
        while (ProcessHandle.of(pid).isPresent()) {
            pid++;
        }
        Run r = cli("status", Long.toString(pid));
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("no JVM with pid " + pid), r.err());
    }

    /** An attach signals its target: a process that is not a JVM must be refused before that. */
    @Test
    @Timeout(30)
    void aProcessThatIsNotAJvmIsRefusedAndLeftAlive() throws Exception {
        Process sleep = new ProcessBuilder("sleep", "30").start();
        try {
            Run r = cli("status", Long.toString(sleep.pid()));
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("process " + sleep.pid() + " (sleep) is not a Java VM"), r.err());
            assertTrue(!sleep.waitFor(200, TimeUnit.MILLISECONDS), "the process must still run");
        } finally {
            sleep.destroy();
        }
    }

    @Test
    void ownPidIsRefused() {
        Run r = cli("status", Long.toString(ProcessHandle.current().pid()));
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("is this tool's own JVM"), r.err());
    }

    @Test
    void verifyAndDoctorCheckTheirArguments() {
        assertTrue(cli("verify").err().contains("missing <trace file>"));
        Run r = cli("verify", "x.trace", "--expect", "udp");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--expect needs rdma, shm or tcp, found 'udp'"), r.err());
        assertTrue(cli("verify", "x.trace", "--expect").err().contains("found nothing"));
        assertTrue(cli("verify", "--bogus", "x").err().contains("unknown option '--bogus'"));
        Run d = cli("doctor", "tcp");
        assertEquals(2, d.exit());
        assertTrue(d.err().contains("expected nothing, 'rdma' or 'shm', found [tcp]"), d.err());
    }
}
