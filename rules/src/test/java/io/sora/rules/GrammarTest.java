package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every valid form of the language parses to the rule it says. */
class GrammarTest {

    private static Rule only(String content) throws RuleSyntaxException {
        List<Rule> rules = RuleSet.parse("g.conf", content).rules();
        assertEquals(1, rules.size(), "rules of: " + content);
        return rules.get(0);
    }

    private static InetAddress ip(String literal) throws Exception {
        return InetAddress.getByName(literal); // a literal: no DNS
    }

    @Test
    void jsorServerSampleVerbatim() throws Exception {
        Rule r = only("rdma    accept    192.168.1.1    65444    192.168.1.3    192.168.1.4     # rdma_server.conf\n");
        assertEquals(Provider.RDMA, r.provider());
        assertEquals(RuleKind.ACCEPT, r.kind());
        assertEquals(Optional.of(ip("192.168.1.1")), r.address());
        assertTrue(r.matchesPort(65444));
        assertFalse(r.matchesPort(65445));
        assertTrue(r.allowsClient(ip("192.168.1.3")));
        assertTrue(r.allowsClient(ip("192.168.1.4")));
        assertFalse(r.allowsClient(ip("192.168.1.5")));
        assertEquals("rdma    accept    192.168.1.1    65444    192.168.1.3    192.168.1.4", r.text());
        assertEquals("g.conf:1: rdma accept 192.168.1.1 65444 192.168.1.3 192.168.1.4", r.toString());
        assertEquals(RuleOptions.defaults(), r.options());
    }

    @Test
    void jsorClientSampleVerbatim() throws Exception {
        Rule r = only("rdma    connect   192.168.1.1    65444                                    # rdma_client.conf");
        assertEquals(RuleKind.CONNECT, r.kind());
        assertTrue(r.matchesAddress(ip("192.168.1.1")));
        assertFalse(r.matchesAddress(ip("192.168.1.2")));
        assertTrue(r.allowsClient(ip("10.9.9.9")), "connect rules have no client list");
        assertEquals("g.conf:1: rdma connect 192.168.1.1 65444", r.toString());
    }

    @Test
    void jsorBindSampleVerbatimRecordsZeroAddressAsWildcard() throws Exception {
        Rule r = only("rdma    bind      0.0.0.0        65333      # client end binds its RDMA connection to port 65333");
        assertEquals(RuleKind.BIND, r.kind());
        assertTrue(r.isWildcardAddress());
        assertEquals(Optional.empty(), r.address());
        assertEquals(65333, r.ports().lowest());
        assertEquals("65333", r.ports().toString());
    }

    @Test
    void shmProvider() throws Exception {
        Rule r = only("shm connect 127.0.0.1 65444");
        assertEquals(Provider.SHM, r.provider());
        assertEquals("shm", r.provider().keyword());
        assertEquals("connect", r.kind().keyword());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        ::1                        | ::1
        [::1]                      | ::1
        fe80::1                    | fe80::1
        2001:db8::8:800:200c:417a  | 2001:db8::8:800:200c:417a
        2001:DB8:0:0:8:800:200C:417A | 2001:db8::8:800:200c:417a
        1:2:3:4:5:6:7:8            | 1:2:3:4:5:6:7:8
        1::                        | 1::
        ::2:3:4:5:6:7:8            | ::2:3:4:5:6:7:8
        ::ffff:192.168.1.1         | 192.168.1.1
        64:ff9b::192.0.2.33        | 64:ff9b::c000:221
        192.168.1.1                | 192.168.1.1
        255.255.255.255            | 255.255.255.255
        0.0.0.1                    | 0.0.0.1
        """)
    void addressLiterals(String text, String expected) throws Exception {
        Rule r = only("rdma connect " + text + " 80");
        assertFalse(r.isWildcardAddress());
        assertEquals(ip(expected), r.address().orElseThrow());
        assertTrue(r.matchesAddress(ip(expected)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"*", "0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0"})
    void wildcardAddresses(String text) throws Exception {
        Rule r = only("rdma accept " + text + " 80");
        assertTrue(r.isWildcardAddress());
        assertTrue(r.matchesAddress(ip("10.1.2.3")));
        assertTrue(r.matchesAddress(ip("2001:db8::1")));
    }

    @Test
    void portForms() throws Exception {
        Rule single = only("rdma connect 1.2.3.4 65444");
        assertTrue(single.matchesPort(65444));
        assertFalse(single.matchesPort(65443));

        Rule range = only("rdma connect 1.2.3.4 65444-65450");
        assertFalse(range.matchesPort(65443));
        assertTrue(range.matchesPort(65444));
        assertTrue(range.matchesPort(65447));
        assertTrue(range.matchesPort(65450));
        assertFalse(range.matchesPort(65451));

        Rule list = only("rdma connect 1.2.3.4 8000-8010,80,443");
        assertEquals(80, list.ports().lowest());
        assertEquals("8000-8010,80,443", list.ports().toString());
        for (int p : new int[] {80, 443, 8000, 8005, 8010}) {
            assertTrue(list.matchesPort(p), "port " + p);
        }
        for (int p : new int[] {79, 81, 442, 444, 7999, 8011}) {
            assertFalse(list.matchesPort(p), "port " + p);
        }

        Rule any = only("rdma connect 1.2.3.4 *");
        assertTrue(any.ports().isAny());
        assertTrue(any.matchesPort(1));
        assertTrue(any.matchesPort(65535));

        assertTrue(only("rdma connect 1.2.3.4 1").matchesPort(1));
        // leading zeros are the number's: any count of them, a port of more than five characters included
        Rule zeros = only("rdma connect 1.2.3.4 0080");
        assertTrue(zeros.matchesPort(80));
        assertFalse(zeros.matchesPort(8));
        assertEquals(65535, only("rdma connect 1.2.3.4 000000000065535").ports().lowest());
        assertEquals(0, only("rdma bind 0.0.0.0 000").ports().lowest());
        assertTrue(only("rdma connect 1.2.3.4 65535").matchesPort(65535));
        assertTrue(only("rdma connect 1.2.3.4 080").matchesPort(80), "leading zeros are decimal");
        assertTrue(only("rdma connect 1.2.3.4 7-7").matchesPort(7));
    }

    @Test
    void bindAcceptsPortZeroForEphemeral() throws Exception {
        Rule r = only("rdma bind 0.0.0.0 0");
        assertTrue(r.matchesPort(0));
        assertFalse(r.matchesPort(65333));
        assertEquals(0, r.ports().lowest());
    }

    @Test
    void acceptClientForms() throws Exception {
        Rule r = only("rdma accept 10.0.0.1 80 192.168.1.0/24 fd00::/8 10.9.9.9 [2001:db8::7] ::ffff:172.16.0.0/108");
        assertTrue(r.allowsClient(ip("192.168.1.0")));
        assertTrue(r.allowsClient(ip("192.168.1.255")));
        assertFalse(r.allowsClient(ip("192.168.2.1")));
        assertTrue(r.allowsClient(ip("fd12:3456::1")));
        assertFalse(r.allowsClient(ip("fe80::1")));
        assertTrue(r.allowsClient(ip("10.9.9.9")));
        assertFalse(r.allowsClient(ip("10.9.9.8")));
        assertTrue(r.allowsClient(ip("2001:db8::7")));
        assertTrue(r.allowsClient(ip("172.16.200.1")), "mapped /108 is IPv4 /12");
        assertTrue(r.allowsClient(ip("172.31.255.255")));
        assertFalse(r.allowsClient(ip("172.32.0.0")));
    }

    @Test
    void acceptWithoutClientListAllowsEveryClient() throws Exception {
        Rule r = only("rdma accept 10.0.0.1 80");
        assertTrue(r.allowsClient(ip("1.1.1.1")));
        assertTrue(r.allowsClient(ip("2001:db8::1")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"*", "0.0.0.0", "::", "1.2.3.4 *"})
    void acceptWithWildcardClientAllowsEveryClient(String clients) throws Exception {
        Rule r = only("rdma accept 10.0.0.1 80 " + clients);
        assertTrue(r.allowsClient(ip("9.9.9.9")));
        assertTrue(r.allowsClient(ip("2001:db8::1")));
    }

    @Test
    void cidrPrefixZeroIsPerFamily() throws Exception {
        Rule v4 = only("rdma accept 10.0.0.1 80 0.0.0.0/0");
        assertTrue(v4.allowsClient(ip("203.0.113.9")));
        assertFalse(v4.allowsClient(ip("2001:db8::1")));
        Rule v6 = only("rdma accept 10.0.0.1 80 ::/0");
        assertTrue(v6.allowsClient(ip("2001:db8::1")));
        assertFalse(v6.allowsClient(ip("203.0.113.9")), "IPv4 clients are compared as IPv4");
    }

    @Test
    void optionsAndTheirDefaults() throws Exception {
        RuleOptions d = RuleOptions.defaults();
        assertEquals(32768, d.sendBufferSize());
        assertEquals(45056, d.receiveBufferSize());
        assertEquals(Duration.ofMillis(100), d.fallbackWait());

        RuleOptions o = only("rdma connect 1.2.3.4 80 sndbuf=64k rcvbuf=1M wait=2s").options();
        assertEquals(65536, o.sendBufferSize());
        assertEquals(1 << 20, o.receiveBufferSize());
        assertEquals(Duration.ofSeconds(2), o.fallbackWait());
        assertEquals("sndbuf=65536 rcvbuf=1048576 wait=2000ms", o.toString());

        RuleOptions partial = only("rdma bind 0.0.0.0 0 rcvbuf=4096").options();
        assertEquals(32768, partial.sendBufferSize());
        assertEquals(4096, partial.receiveBufferSize());
        assertEquals(Duration.ofMillis(100), partial.fallbackWait());

        assertEquals(1 << 30, only("rdma connect 1.2.3.4 80 sndbuf=1024m").options().sendBufferSize());
        assertEquals(1 << 30, only("rdma connect 1.2.3.4 80 sndbuf=1073741824").options().sendBufferSize());
        assertEquals(4096, only("rdma connect 1.2.3.4 80 sndbuf=4K").options().sendBufferSize());
        assertEquals(Duration.ZERO, only("rdma connect 1.2.3.4 80 wait=0").options().fallbackWait());
        assertEquals(Duration.ofMillis(250), only("rdma connect 1.2.3.4 80 wait=250").options().fallbackWait());
        assertEquals(Duration.ofMillis(100), only("rdma connect 1.2.3.4 80 wait=100ms").options().fallbackWait());
        assertEquals(Duration.ofSeconds(60), only("rdma connect 1.2.3.4 80 wait=60s").options().fallbackWait());
        assertEquals(Duration.ofSeconds(60), only("rdma connect 1.2.3.4 80 wait=60000ms").options().fallbackWait());
    }

    @Test
    void optionsMayStandAmongTheClientsOfAnAcceptRule() throws Exception {
        Rule r = only("shm accept 127.0.0.1 65444 wait=5ms 127.0.0.1 sndbuf=8k ::1");
        assertEquals(Duration.ofMillis(5), r.options().fallbackWait());
        assertEquals(8192, r.options().sendBufferSize());
        assertTrue(r.allowsClient(ip("127.0.0.1")));
        assertTrue(r.allowsClient(ip("::1")));
        assertFalse(r.allowsClient(ip("127.0.0.2")));
    }

    @Test
    void commentsBlankLinesTabsCrLfAndByteOrderMark() throws Exception {
        String content = "\uFEFF# JSOR-style file\r\n"
                + "\r\n"
                + "   \t  \r\n"
                + "rdma\tconnect\t192.168.1.1\t65444#no space before the comment\r\n"
                + "  # indented comment\r\n"
                + "shm accept * * # any address, any port\r\n";
        RuleSet set = RuleSet.parse("crlf.conf", content);
        assertEquals(2, set.rules().size());
        Rule first = set.rules().get(0);
        assertEquals(4, first.line());
        assertEquals("rdma\tconnect\t192.168.1.1\t65444", first.text());
        assertEquals("crlf.conf:4: rdma connect 192.168.1.1 65444", first.toString());
        Rule second = set.rules().get(1);
        assertEquals(6, second.line());
        assertEquals("shm accept * *", second.text());
        assertEquals("crlf.conf", second.source());
    }

    @Test
    void emptyAndCommentOnlyContentGiveAnEmptySet() throws Exception {
        assertTrue(RuleSet.parse("e.conf", "").isEmpty());
        RuleSet comments = RuleSet.parse("c.conf", "# nothing\n\n   # here\n");
        assertTrue(comments.isEmpty());
        assertEquals("c.conf", comments.source());
        assertTrue(RuleSet.empty().isEmpty());
        assertEquals("(no rules)", RuleSet.empty().source());
        assertSame(RuleSet.empty(), RuleSet.empty());
    }

    @Test
    void rulesKeepFileOrderAndAreImmutable() throws Exception {
        RuleSet set = RuleSet.parse("o.conf", "rdma bind 0.0.0.0 65333\nrdma connect 1.2.3.4 80\nshm accept * 81\n");
        assertEquals(List.of(RuleKind.BIND, RuleKind.CONNECT, RuleKind.ACCEPT),
                set.rules().stream().map(Rule::kind).toList());
        assertEquals(List.of(1, 2, 3), set.rules().stream().map(Rule::line).toList());
        assertThrows(UnsupportedOperationException.class, () -> set.rules().clear());
        assertEquals("o.conf (3 rules)", set.toString());
    }
}
