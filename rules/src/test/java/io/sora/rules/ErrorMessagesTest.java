package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every error message of the language, asserted exactly with its line and column. Each case is a one-line file
 * named {@code t.conf}; columns were counted by hand from the line text.
 */
class ErrorMessagesTest {

    private static final String FIELDS = "<provider> <kind> <address> <ports>";

    /** Parses one line that must fail, and checks the single error it reports, field by field. */
    private static void assertError(String line, int column, String offending, String message) {
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class, () -> RuleSet.parse("t.conf", line));
        assertEquals(1, e.errors().size(), "errors of: " + line);
        RuleError err = e.errors().get(0);
        assertEquals(new RuleError("t.conf", 1, column, offending, message), err, "line: " + line);
        assertEquals("t.conf:1:" + column + ": " + message, e.getMessage());
    }

    @Test
    void tooFewFieldsCountsThemAndNamesTheFourNeeded() {
        assertError("rdma accept 192.168.1.1", 1, "rdma accept 192.168.1.1",
                "rule has 3 fields, needs at least 4: " + FIELDS);
        assertError("rdma", 1, "rdma", "rule has 1 field, needs at least 4: " + FIELDS);
        assertError("  rdma\tconnect   # no address", 3, "rdma\tconnect",
                "rule has 2 fields, needs at least 4: " + FIELDS);
    }

    /** A no-break space pasted from a web page looks like a separator and is named, with its column. */
    @Test
    void aUnicodeSpaceIsNamedWhereItIs() throws RuleSyntaxException {
        assertError("rdma connect\u00a0192.168.1.1 65444", 13, "\u00a0",
                "U+00A0 (no-break space) at column 13: fields are separated by spaces and tabs only");
        assertError("rdma connect 192.168.1.1 80\u2003", 28, "\u2003",
                "U+2003 (em space) at column 28: fields are separated by spaces and tabs only");
        // in a comment it is only text
        assertEquals(1, RuleSet.parse("t.conf", "rdma connect 192.168.1.1 80 #\u00a0note").rules().size());
    }

    @Test
    void briefExamplesFormatExactly() {
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class,
                () -> RuleSet.parse("server.conf", "# server\nrdma accept 192.168.1.1\nrdma connect ::1 65a\n"));
        assertEquals("server.conf:2:1: rule has 3 fields, needs at least 4: " + FIELDS, e.getMessage());
        assertEquals("server.conf:3:18: port '65a' is not a number", e.errors().get(1).format());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
        tcp connect 1.2.3.4 80     | 1 | tcp     | unknown provider 'tcp', expected one of: rdma, shm
        RDMA connect 1.2.3.4 80    | 1 | RDMA    | unknown provider 'RDMA', expected one of: rdma, shm (keywords are lower case)
        rdma listen 1.2.3.4 80     | 6 | listen  | unknown rule kind 'listen', expected one of: accept, bind, connect
        rdma Connect 1.2.3.4 80    | 6 | Connect | unknown rule kind 'Connect', expected one of: accept, bind, connect (keywords are lower case)
        """)
    void providerAndKind(String line, int column, String offending, String message) {
        assertError(line.strip(), column, offending, message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
        rdma connect foo 80           | 14 | foo          | address 'foo' is not an IP address (hostnames are not resolved)
        rdma connect example.com 80   | 14 | example.com  | address 'example.com' is not an IP address (hostnames are not resolved)
        rdma connect 300.1.1.1 80     | 14 | 300.1.1.1    | address '300.1.1.1' is not a valid IPv4 address
        rdma connect 1.2.3 80         | 14 | 1.2.3        | address '1.2.3' is not a valid IPv4 address
        rdma connect 010.1.1.1 80     | 14 | 010.1.1.1    | address '010.1.1.1' is not a valid IPv4 address
        rdma connect 1.2.3.4. 80      | 14 | 1.2.3.4.     | address '1.2.3.4.' is not a valid IPv4 address
        rdma connect fe80:::1 80      | 14 | fe80:::1     | address 'fe80:::1' is not a valid IPv6 address
        rdma connect 1::2::3 80       | 14 | 1::2::3      | address '1::2::3' is not a valid IPv6 address
        rdma connect 1:2:3:4:5:6:7 80 | 14 | 1:2:3:4:5:6:7 | address '1:2:3:4:5:6:7' is not a valid IPv6 address
        rdma connect 1:2:3:4:5:6:7::8 80 | 14 | 1:2:3:4:5:6:7::8 | address '1:2:3:4:5:6:7::8' is not a valid IPv6 address
        rdma connect 12345::1 80      | 14 | 12345::1     | address '12345::1' is not a valid IPv6 address
        rdma connect [1.2.3.4] 80     | 14 | [1.2.3.4]    | address '[1.2.3.4]' is not a valid IPv6 address
        rdma connect [] 80            | 14 | []           | address '[]' is not a valid IPv6 address
        rdma connect fe80::1%eth0 80  | 14 | fe80::1%eth0 | address 'fe80::1%eth0' has a zone id ('%eth0'), which is not supported
        rdma bind 10.0.0.0/8 80       | 11 | 10.0.0.0/8   | address '10.0.0.0/8' is a CIDR block; a bind rule names the one address it binds to
        rdma bind localhost 65333     | 11 | localhost    | address 'localhost' is not an IP address (hostnames are not resolved)
        """)
    void address(String line, int column, String offending, String message) {
        assertError(line.strip(), column, offending, message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
        rdma connect 1.2.3.4 65a          | 22 | 65a         | port '65a' is not a number
        rdma connect 1.2.3.4 80,4x3       | 25 | 4x3         | port '4x3' is not a number
        rdma connect 1.2.3.4 8000-9x      | 27 | 9x          | port '9x' is not a number
        rdma connect 1.2.3.4 +80          | 22 | +80         | port '+80' is not a number
        rdma connect 1.2.3.4 70000        | 22 | 70000       | port '70000' is out of range 1..65535
        rdma connect 1.2.3.4 99999999999  | 22 | 99999999999 | port '99999999999' is out of range 1..65535
        rdma connect 1.2.3.4 0            | 22 | 0           | port '0' is out of range 1..65535 (port 0, an ephemeral port, is allowed only in bind rules)
        rdma connect 1.2.3.4 0000         | 22 | 0000        | port '0000' is out of range 1..65535 (port 0, an ephemeral port, is allowed only in bind rules)
        rdma connect 1.2.3.4 00000070000  | 22 | 00000070000 | port '00000070000' is out of range 1..65535
        rdma accept 1.2.3.4 0             | 21 | 0           | port '0' is out of range 1..65535 (port 0, an ephemeral port, is allowed only in bind rules)
        rdma accept 1.2.3.4 80,0-10       | 24 | 0           | port '0' is out of range 1..65535 (port 0, an ephemeral port, is allowed only in bind rules)
        rdma bind 0.0.0.0 70000           | 19 | 70000       | port '70000' is out of range 0..65535
        rdma connect 1.2.3.4 65450-65444  | 22 | 65450-65444 | port range '65450-65444' is reversed: 65450 is greater than 65444
        rdma connect 1.2.3.4 80-          | 22 | 80-         | port range '80-' needs a first and a last port, as in 65444-65450
        rdma connect 1.2.3.4 -1           | 22 | -1          | port range '-1' needs a first and a last port, as in 65444-65450
        rdma connect 1.2.3.4 1-2-3        | 22 | 1-2-3       | port range '1-2-3' needs a first and a last port, as in 65444-65450
        rdma connect 1.2.3.4 80,,443      | 22 | 80,,443     | port list '80,,443' has an empty element
        rdma connect 1.2.3.4 80,          | 22 | 80,         | port list '80,' has an empty element
        rdma connect 1.2.3.4 ,80          | 22 | ,80         | port list ',80' has an empty element
        rdma connect 1.2.3.4 80,*         | 22 | 80,*        | port list '80,*' mixes '*' with other ports
        """)
    void ports(String line, int column, String offending, String message) {
        assertError(line.strip(), column, offending, message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
        rdma accept 1.2.3.4 80 bob            | 24 | bob            | client 'bob' is not an IP address or CIDR block (hostnames are not resolved)
        rdma accept 1.2.3.4 80 1.2.3.5 host-b | 32 | host-b         | client 'host-b' is not an IP address or CIDR block (hostnames are not resolved)
        rdma accept 1.2.3.4 80 1.2.3.256      | 24 | 1.2.3.256      | client '1.2.3.256' is not a valid IPv4 address
        rdma accept 1.2.3.4 80 1.2.3.256/24   | 24 | 1.2.3.256/24   | client '1.2.3.256/24' is not a valid IPv4 address
        rdma accept 1.2.3.4 80 gg::1          | 24 | gg::1          | client 'gg::1' is not a valid IPv6 address
        rdma accept 1.2.3.4 80 fe80::1%eth0   | 24 | fe80::1%eth0   | client 'fe80::1%eth0' has a zone id ('%eth0'), which is not supported
        rdma accept 1.2.3.4 80 1.2.3.0/33     | 24 | 1.2.3.0/33     | client '1.2.3.0/33': prefix length '33' is out of range 0..32
        rdma accept 1.2.3.4 80 fd00::/129     | 24 | fd00::/129     | client 'fd00::/129': prefix length '129' is out of range 0..128
        rdma accept 1.2.3.4 80 10.0.0.0/x     | 24 | 10.0.0.0/x     | client '10.0.0.0/x': prefix length 'x' is not a number
        rdma accept 1.2.3.4 80 10.0.0.0/      | 24 | 10.0.0.0/      | client '10.0.0.0/': prefix length '' is not a number
        rdma accept 1.2.3.4 80 192.168.1.1/24 | 24 | 192.168.1.1/24 | client '192.168.1.1/24' has host bits set after the prefix; did you mean '192.168.1.0/24'?
        rdma accept 1.2.3.4 80 fd00::1/8      | 24 | fd00::1/8      | client 'fd00::1/8' has host bits set after the prefix; did you mean 'fd00::/8'?
        rdma connect 1.2.3.4 80 1.2.3.5       | 25 | 1.2.3.5        | unexpected field '1.2.3.5': connect rules take no client list (only accept rules do)
        rdma bind 0.0.0.0 65333 extra         | 25 | extra          | unexpected field 'extra': bind rules take no client list (only accept rules do)
        """)
    void clientsAndExtraFields(String line, int column, String offending, String message) {
        assertError(line.strip(), column, offending, message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
        rdma connect 1.2.3.4 80 =5                     | 25 | =5      | option '=5' has no name
        rdma connect 1.2.3.4 80 foo=1                  | 25 | foo     | unknown option 'foo', expected one of: sndbuf, rcvbuf, wait
        rdma connect 1.2.3.4 80 SNDBUF=64k             | 25 | SNDBUF  | unknown option 'SNDBUF', expected one of: sndbuf, rcvbuf, wait
        rdma connect 1.2.3.4 80 sndbuf=64k sndbuf=32k  | 36 | sndbuf  | duplicate option 'sndbuf' (already given in column 25)
        rdma accept 1.2.3.4 80 wait=1s 1.2.3.5 wait=2s | 40 | wait    | duplicate option 'wait' (already given in column 24)
        rdma connect 1.2.3.4 80 sndbuf=                | 25 | sndbuf= | option 'sndbuf=' has no value
        rdma connect 1.2.3.4 80 sndbuf=12x             | 32 | 12x     | sndbuf '12x' is not a size: write bytes, or a number with suffix k (KiB) or m (MiB)
        rdma connect 1.2.3.4 80 sndbuf=k               | 32 | k       | sndbuf 'k' is not a size: write bytes, or a number with suffix k (KiB) or m (MiB)
        rdma connect 1.2.3.4 80 sndbuf=1g              | 32 | 1g      | sndbuf '1g' is not a size: write bytes, or a number with suffix k (KiB) or m (MiB)
        rdma connect 1.2.3.4 80 rcvbuf=1k              | 32 | 1k      | rcvbuf '1k' is out of range 4096..1073741824 bytes (4k..1024m)
        rdma connect 1.2.3.4 80 rcvbuf=4095            | 32 | 4095    | rcvbuf '4095' is out of range 4096..1073741824 bytes (4k..1024m)
        rdma connect 1.2.3.4 80 sndbuf=1025m           | 32 | 1025m   | sndbuf '1025m' is out of range 4096..1073741824 bytes (4k..1024m)
        rdma connect 1.2.3.4 80 sndbuf=99999999999999m | 32 | 99999999999999m | sndbuf '99999999999999m' is out of range 4096..1073741824 bytes (4k..1024m)
        rdma connect 1.2.3.4 80 wait=abc               | 30 | abc     | wait 'abc' is not a duration: write milliseconds, or a number with suffix ms or s
        rdma connect 1.2.3.4 80 wait=1.5s              | 30 | 1.5s    | wait '1.5s' is not a duration: write milliseconds, or a number with suffix ms or s
        rdma connect 1.2.3.4 80 wait=-1                | 30 | -1      | wait '-1' is not a duration: write milliseconds, or a number with suffix ms or s
        rdma connect 1.2.3.4 80 wait=ms                | 30 | ms      | wait 'ms' is not a duration: write milliseconds, or a number with suffix ms or s
        rdma connect 1.2.3.4 80 wait=61s               | 30 | 61s     | wait '61s' is out of range 0..60s
        rdma connect 1.2.3.4 80 wait=60001             | 30 | 60001   | wait '60001' is out of range 0..60s
        """)
    void options(String line, int column, String offending, String message) {
        assertError(line.strip(), column, offending, message);
    }

    @Test
    void columnsCountTabsAsOneAndIgnoreTheByteOrderMark() {
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class,
                () -> RuleSet.parse("t.conf", "\uFEFFrdma\tconnect\t1.2.3.4\tx\r\n"));
        assertEquals("t.conf:1:22: port 'x' is not a number", e.getMessage());
        assertEquals("x", e.errors().get(0).offendingText());
    }

    @Test
    void collectsTheFirstErrorOfEveryLineInFileOrder() {
        String content = String.join("\r\n",
                "rdma connect 1.2.3.4 80      # fine",
                "tcp connect foo 65a          # three faults: only the provider is reported",
                "",
                "rdma accept 1.2.3.4 80 bob",
                "shm connect ::1 65444        # fine",
                "rdma connect 1.2.3.4 80 wait=99s");
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class, () -> RuleSet.parse("multi.conf", content));
        assertEquals(java.util.List.of(
                new RuleError("multi.conf", 2, 1, "tcp", "unknown provider 'tcp', expected one of: rdma, shm"),
                new RuleError("multi.conf", 4, 24, "bob",
                        "client 'bob' is not an IP address or CIDR block (hostnames are not resolved)"),
                new RuleError("multi.conf", 6, 30, "99s", "wait '99s' is out of range 0..60s")), e.errors());
        assertEquals("multi.conf:2:1: unknown provider 'tcp', expected one of: rdma, shm", e.getMessage());
    }

    @Test
    void lineNumbersCountCrOnlyAndCrLfAndLfEndingsAlike() {
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class,
                () -> RuleSet.parse("t.conf", "# a\r# b\r\n# c\n\nrdma x 1.2.3.4 80\n"));
        assertEquals("t.conf:5:6: unknown rule kind 'x', expected one of: accept, bind, connect", e.getMessage());
    }

    @Test
    void exceptionRejectsAnEmptyErrorListAndCopiesTheList() {
        assertThrows(IllegalArgumentException.class, () -> new RuleSyntaxException(java.util.List.of()));
        java.util.List<RuleError> list = new java.util.ArrayList<>();
        list.add(new RuleError("f", 1, 2, "x", "m"));
        RuleSyntaxException e = new RuleSyntaxException(list);
        list.clear();
        assertEquals(1, e.errors().size());
        assertThrows(UnsupportedOperationException.class, () -> e.errors().clear());
        assertEquals("f:1:2: m", e.getMessage());
    }
}
