package io.sora.rules.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleError;
import io.sora.rules.RuleSet;
import io.sora.rules.RuleSyntaxException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile configuration text: {@link RuleSet#parse(String, String)} either returns rules or throws
 * {@link RuleSyntaxException} whose errors point inside the text; never any other exception, never a
 * hang. Every rule it returns can be matched against any address without throwing.
 *
 * <p>Two engines over the same property: Jazzer ({@link #parseThrowsOnlyRuleSyntaxException}; the
 * default build replays the seeds in {@code RuleSetFuzzTestInputs}, {@code mvn -Psoak} fuzzes it with
 * coverage feedback for {@code jazzer.max_duration}), and a mutational fuzzer that really mutates in
 * every build ({@link #mutatedConfigurationsOnlyFailWithRuleSyntaxException}, 2 s by default,
 * {@code -Dsora.fuzz.seconds}).
 */
class RuleSetFuzzTest {
    private static final String SOURCE = "fuzz.conf";
    private static final List<String> DICTIONARY = List.of("rdma", "shm", "accept", "connect", "bind",
            "0.0.0.0", "::", "::1", "127.0.0.1", "[fd00::1]", "::ffff:10.0.0.1", "10.0.0.0/8", "fd00::/64", "/0",
            "/33", "/129", "*", "65444", "65535", "65536", "0", "1-65535", "9000,9443", "7000-7010", "-",
            ",", "#", " ", "\t", "\n", "\r\n", "\r", "\uFEFF", "=", "sndbuf=", "rcvbuf=", "wait=", "4k", "1m",
            "1024m", "99999999999", "ms", "s", "%eth0", "\u0000", "\u00e9", "\ud83d\ude00");
    private static final InetAddress[] PROBES = probes();
    private static final int[] PORTS = {0, 1, 7003, 65444, 65535};

    @FuzzTest(maxDuration = "5m")
    @DictionaryEntries({"rdma", "shm", "accept", "connect", "bind", "0.0.0.0", "::1", "127.0.0.1", "*",
            "65444", "sndbuf=", "rcvbuf=", "wait=", "/64", "-", ",", "#", "\\x0a"})
    void parseThrowsOnlyRuleSyntaxException(byte[] input) {
        check(new String(input, StandardCharsets.UTF_8));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void mutatedConfigurationsOnlyFailWithRuleSyntaxException() throws IOException {
        MutationalFuzzer fuzzer = new MutationalFuzzer(seeds(), DICTIONARY, MutationalFuzzer.seedFromProperty(), 4096);
        MutationalFuzzer.Report r = fuzzer.run(input -> check(new String(input, StandardCharsets.UTF_8)),
                MutationalFuzzer.budgetFromProperty(2), 5_000_000);
        System.out.println("RuleSetFuzzTest mutational run: " + r);
        assertTrue(r.executions() > seeds().size(), "the fuzzer must run more than its seeds: " + r);
        assertTrue(r.signatures() > 5, "mutants must reach more than a handful of outcomes: " + r);
    }

    /** The seed files shared with Jazzer. */
    static List<byte[]> seeds() throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (String name : List.of("documented.conf", "options.conf", "errors.conf", "crlf-bom.conf", "ipv6.conf")) {
            try (InputStream in = RuleSetFuzzTest.class.getResourceAsStream("RuleSetFuzzTestInputs/" + name)) {
                if (in == null) throw new IOException("seed " + name + " missing from the test resources");
                out.add(in.readAllBytes());
            }
        }
        return out;
    }

    /** The property; returns a signature of the outcome for the mutational fuzzer's feedback. */
    static String check(String content) {
        int lines = lineCount(content);
        try {
            RuleSet set = RuleSet.parse(SOURCE, content);
            assertEquals(SOURCE, set.source());
            for (Rule r : set.rules()) {
                assertTrue(r.line() >= 1 && r.line() <= lines, "rule line " + r.line() + " outside 1.." + lines);
                assertEquals(SOURCE, r.source());
                exercise(r);
            }
            exercise(set);
            return "ok:" + Math.min(set.rules().size(), 3);
        } catch (RuleSyntaxException e) {
            List<RuleError> errors = e.errors();
            assertFalse(errors.isEmpty(), "a RuleSyntaxException without errors");
            assertEquals(errors.get(0).format(), e.getMessage());
            int previousLine = 0;
            for (RuleError err : errors) {
                assertEquals(SOURCE, err.source());
                assertTrue(err.line() > previousLine && err.line() <= lines,
                        "error line " + err.line() + " after " + previousLine + ", text has " + lines + " lines: " + err);
                assertTrue(err.column() >= 1, "column " + err.column() + ": " + err);
                assertTrue(err.message() != null && !err.message().isBlank(), "no message: " + err);
                assertTrue(err.offendingText() != null, "no offending text: " + err);
                previousLine = err.line();
            }
            return "error:" + errors.get(0).message().replaceAll("'[^']*'", "Q").replaceAll("[0-9]+", "N");
        }
    }

    /** Lines as the parser counts them: ended by LF, CRLF or CR; a last line without an end counts. */
    static int lineCount(String s) {
        int n = 0;
        int i = 0;
        while (i < s.length()) {
            int end = i;
            while (end < s.length() && s.charAt(end) != '\n' && s.charAt(end) != '\r') end++;
            n++;
            i = end < s.length() - 1 && s.charAt(end) == '\r' && s.charAt(end + 1) == '\n' ? end + 2 : end + 1;
        }
        return Math.max(n, 1);
    }

    private static void exercise(Rule r) {
        for (InetAddress a : PROBES) {
            r.matchesAddress(a);
            r.allowsClient(a);
        }
        for (int p : PORTS) r.matchesPort(p);
        r.options().fallbackWait();
        assertTrue(r.options().sendBufferSize() > 0 && r.options().receiveBufferSize() > 0, "buffer sizes of " + r);
        assertFalse(r.options().fallbackWait().isNegative(), "wait of " + r);
    }

    private static void exercise(RuleSet set) {
        for (InetAddress a : PROBES) {
            for (int p : PORTS) {
                InetSocketAddress end = new InetSocketAddress(a, p);
                set.matchConnect(end);
                set.matchAccept(end);
                set.mayAccept(end);
            }
        }
        for (Provider provider : Provider.values()) {
            for (int p : PORTS) set.matchBind(provider, p);
        }
        set.matchConnect(InetSocketAddress.createUnresolved("example.invalid", 65444));
    }

    private static InetAddress[] probes() {
        try {
            return new InetAddress[] {
                InetAddress.getByAddress(new byte[] {127, 0, 0, 1}),
                InetAddress.getByAddress(new byte[] {10, 20, 3, 4}),
                InetAddress.getByAddress(new byte[4]),
                InetAddress.getByAddress(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}),
                InetAddress.getByAddress(new byte[] {(byte) 0xfd, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42}),
                InetAddress.getByAddress(new byte[16]),
            };
        } catch (UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
