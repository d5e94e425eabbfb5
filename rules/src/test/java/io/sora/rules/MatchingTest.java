package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Connection lookups: first match wins, wildcards, ranges, lists, CIDR, mapped addresses, mayAccept, bind. */
class MatchingTest {

    private static InetSocketAddress at(String literal, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(literal), port);
    }

    /** The file line of the matched rule, or 0 when nothing matched: tells which rule won. */
    private static int line(Optional<Rule> rule) {
        return rule.map(Rule::line).orElse(0);
    }

    /** An Inet6Address holding ::ffff:a.b.c.d (the JDK folds such text to Inet4Address, so build it by bytes). */
    private static InetAddress mapped(int a, int b, int c, int d) throws Exception {
        byte[] bytes = new byte[16];
        bytes[10] = (byte) 0xff;
        bytes[11] = (byte) 0xff;
        bytes[12] = (byte) a;
        bytes[13] = (byte) b;
        bytes[14] = (byte) c;
        bytes[15] = (byte) d;
        return Inet6Address.getByAddress(null, bytes, -1);
    }

    /**
     * JSOR's full grammar (IBM's reference for com.ibm.net.rdma.conf): {@code host-spec = ipaddress[/prefix]},
     * {@code port-spec = (*|port)[-(*|port)]}, and {@code any} or {@code all} for every client. Before
     * 2026-11-29 each of these lines was an error, and one such line cost the whole file.
     */
    @Test
    void jsorsBlocksOpenRangesAndAnyClientMatch() throws Exception {
        RuleSet set = RuleSet.parse("j.conf", String.join("\n",
                "rdma connect 192.168.1.0/24 1024-*",
                "rdma accept 10.1.0.0/16 *-1023 all",
                "rdma accept 10.2.0.1 *-* any"));
        assertEquals(1, line(set.matchConnect(at("192.168.1.77", 65444))));
        assertEquals(1, line(set.matchConnect(at("192.168.1.77", 1024))));
        assertEquals(0, line(set.matchConnect(at("192.168.1.77", 1023))));
        assertEquals(0, line(set.matchConnect(at("192.168.2.1", 65444))));
        Rule a = set.matchAccept(at("10.1.200.3", 80)).orElseThrow();
        assertEquals(2, a.line());
        assertTrue(a.allowsClient(InetAddress.getByName("172.16.0.9")), "all: every client");
        assertEquals(0, line(set.matchAccept(at("10.1.200.3", 1024))));
        assertEquals(3, line(set.matchAccept(at("10.2.0.1", 1))));
        assertEquals(3, line(set.matchAccept(at("10.2.0.1", 65535))));
        assertTrue(set.matchAccept(at("10.2.0.1", 9)).orElseThrow().allowsClient(InetAddress.getByName("::1")), "any: every client");
    }

    @Test
    void firstConnectRuleInFileOrderWinsWhateverItsProvider() throws Exception {
        RuleSet set = RuleSet.parse("c.conf", String.join("\n",
                "rdma accept * 65444",
                "shm  connect 127.0.0.1 65444",
                "rdma connect * 65444",
                "rdma connect 192.168.1.1 65000-65535"));
        Optional<Rule> local = set.matchConnect(at("127.0.0.1", 65444));
        assertEquals(2, line(local));
        assertEquals(Provider.SHM, local.orElseThrow().provider());
        assertEquals(3, line(set.matchConnect(at("192.168.1.1", 65444))), "the wildcard rule comes first");
        assertEquals(4, line(set.matchConnect(at("192.168.1.1", 65001))));
        assertEquals(0, line(set.matchConnect(at("192.168.1.2", 65001))));
        assertEquals(0, line(set.matchConnect(at("192.168.1.1", 64999))));
    }

    @Test
    void aProviderIsUsedWhenAnyRuleOfAnyKindNamesIt() throws Exception {
        RuleSet set = RuleSet.parse("u.conf", "rdma bind * *\n");
        assertTrue(set.uses(Provider.RDMA));
        assertFalse(set.uses(Provider.SHM));
        assertFalse(RuleSet.empty().uses(Provider.RDMA));
    }

    @Test
    void connectLooksAtConnectRulesOnly() throws Exception {
        RuleSet set = RuleSet.parse("k.conf", "rdma accept * *\nrdma bind * *\n");
        assertEquals(Optional.empty(), set.matchConnect(at("10.0.0.1", 80)));
        assertEquals(1, line(set.matchAccept(at("10.0.0.1", 80))));
        assertEquals(2, line(set.matchBind(Provider.RDMA, 80)));
    }

    @Test
    void portListsAndRangesMatchAtTheirBounds() throws Exception {
        RuleSet set = RuleSet.parse("p.conf", "rdma connect 10.0.0.1 80,443,8000-8010\n");
        for (int p : new int[] {80, 443, 8000, 8010}) {
            assertEquals(1, line(set.matchConnect(at("10.0.0.1", p))), "port " + p);
        }
        for (int p : new int[] {79, 444, 7999, 8011}) {
            assertEquals(0, line(set.matchConnect(at("10.0.0.1", p))), "port " + p);
        }
    }

    @Test
    void ipv4MappedAddressesEqualTheirIpv4Form() throws Exception {
        RuleSet set = RuleSet.parse("m.conf", String.join("\n",
                "rdma connect 192.168.1.1 80",
                "rdma accept ::ffff:10.0.0.1 81 192.168.1.0/24"));
        InetAddress mappedRemote = mapped(192, 168, 1, 1);
        assertTrue(mappedRemote instanceof Inet6Address, "test precondition: a real Inet6Address");
        assertEquals(1, line(set.matchConnect(new InetSocketAddress(mappedRemote, 80))));
        Rule accept = set.matchAccept(at("10.0.0.1", 81)).orElseThrow();
        assertEquals(2, accept.line());
        assertEquals(accept, set.matchAccept(new InetSocketAddress(mapped(10, 0, 0, 1), 81)).orElseThrow());
        assertTrue(accept.allowsClient(mapped(192, 168, 1, 77)));
        assertFalse(accept.allowsClient(mapped(192, 168, 2, 77)));
        assertTrue(accept.matchesAddress(mapped(10, 0, 0, 1)));
    }

    @Test
    void ipv4RulesDoNotMatchIpv6AddressesAndTheReverse() throws Exception {
        RuleSet set = RuleSet.parse("f.conf", "rdma connect 0.0.0.1 80\nrdma connect ::1 81\n");
        assertEquals(0, line(set.matchConnect(at("::1", 80))));
        assertEquals(0, line(set.matchConnect(at("::0.0.0.1", 80))), "IPv4-compatible is not IPv4-mapped");
        assertEquals(1, line(set.matchConnect(at("0.0.0.1", 80))));
        assertEquals(2, line(set.matchConnect(at("::1", 81))));
        assertEquals(0, line(set.matchConnect(at("0.0.0.1", 81))));
    }

    @Test
    void ipv6RuleAddressesMatchByValueNotSpelling() throws Exception {
        RuleSet set = RuleSet.parse("v6.conf", "rdma connect [2001:DB8:0::1] 65444\n");
        assertEquals(1, line(set.matchConnect(at("2001:db8:0:0:0:0:0:1", 65444))));
        assertEquals(0, line(set.matchConnect(at("2001:db8::2", 65444))));
        InetAddress scoped = Inet6Address.getByAddress(null, InetAddress.getByName("2001:db8::1").getAddress(), 3);
        assertEquals(1, line(set.matchConnect(new InetSocketAddress(scoped, 65444))), "zone ids are ignored");
    }

    @Test
    void matchAcceptIgnoresTheClientListButAllowsClientChecksIt() throws Exception {
        RuleSet set = RuleSet.parse("a.conf", String.join("\n",
                "rdma accept 192.168.1.1 65444 192.168.1.3 192.168.1.4",
                "rdma accept * 65444 10.0.0.0/8"));
        Rule r = set.matchAccept(at("192.168.1.1", 65444)).orElseThrow();
        assertEquals(1, r.line());
        assertTrue(r.allowsClient(InetAddress.getByName("192.168.1.3")));
        assertFalse(r.allowsClient(InetAddress.getByName("10.1.1.1")), "first match wins: no fall-through");
        assertEquals(2, line(set.matchAccept(at("192.168.1.2", 65444))));
    }

    @Test
    void cidrBlocksOfBothFamilies() throws Exception {
        Rule r = RuleSet.parse("cidr.conf", "rdma accept * * 10.1.0.0/16 fd00::/8 2001:db8:1::/48 9.9.9.9/32\n")
                .rules().get(0);
        assertTrue(r.allowsClient(InetAddress.getByName("10.1.255.255")));
        assertFalse(r.allowsClient(InetAddress.getByName("10.2.0.0")));
        assertTrue(r.allowsClient(InetAddress.getByName("fdff:ffff::1")));
        assertFalse(r.allowsClient(InetAddress.getByName("fe00::1")));
        assertTrue(r.allowsClient(InetAddress.getByName("2001:db8:1:ffff::1")));
        assertFalse(r.allowsClient(InetAddress.getByName("2001:db8:2::1")));
        assertTrue(r.allowsClient(InetAddress.getByName("9.9.9.9")));
        assertFalse(r.allowsClient(InetAddress.getByName("9.9.9.8")));
    }

    @Test
    void cidrPrefixesAcrossTheLongBoundaryOfIpv6() throws Exception {
        Rule r = RuleSet.parse("b.conf", "rdma accept * * 2001:db8::8000:0:0:0/65 2001:db8::1/128\n").rules().get(0);
        assertTrue(r.allowsClient(InetAddress.getByName("2001:db8:0:0:8000::5")));
        assertTrue(r.allowsClient(InetAddress.getByName("2001:db8:0:0:ffff:ffff:ffff:ffff")));
        assertFalse(r.allowsClient(InetAddress.getByName("2001:db8:0:0:7fff::5")));
        assertTrue(r.allowsClient(InetAddress.getByName("2001:db8::1")));
        assertFalse(r.allowsClient(InetAddress.getByName("2001:db8::3")));
    }

    @Test
    void mayAcceptWithWildcardAndSpecificBoundAddresses() throws Exception {
        RuleSet set = RuleSet.parse("s.conf", String.join("\n",
                "rdma accept 192.168.1.1 65444 192.168.1.3",
                "shm accept 127.0.0.1 7000-7010",
                "rdma connect * 9000"));
        assertTrue(set.mayAccept(at("0.0.0.0", 65444)), "a wildcard socket may accept on 192.168.1.1");
        assertTrue(set.mayAccept(at("::", 7005)));
        assertTrue(set.mayAccept(at("192.168.1.1", 65444)));
        assertTrue(set.mayAccept(at("127.0.0.1", 7010)));
        assertFalse(set.mayAccept(at("192.168.1.2", 65444)), "bound to another address");
        assertFalse(set.mayAccept(at("0.0.0.0", 65445)), "no accept rule for the port");
        assertFalse(set.mayAccept(at("0.0.0.0", 9000)), "connect rules do not count");
        assertFalse(RuleSet.empty().mayAccept(at("0.0.0.0", 65444)));
    }

    @Test
    void matchBindChoosesByProviderThenPort() throws Exception {
        RuleSet set = RuleSet.parse("b.conf", String.join("\n",
                "shm bind * *",
                "rdma bind 0.0.0.0 65333",
                "rdma bind 10.0.0.5 0",
                "rdma bind * 7000-7100"));
        assertEquals(1, line(set.matchBind(Provider.SHM, 1234)));
        assertEquals(2, line(set.matchBind(Provider.RDMA, 65333)));
        assertEquals(3, line(set.matchBind(Provider.RDMA, 0)));
        assertEquals(4, line(set.matchBind(Provider.RDMA, 7050)));
        assertEquals(0, line(set.matchBind(Provider.RDMA, 8000)));
        Rule ephemeral = set.matchBind(Provider.RDMA, 0).orElseThrow();
        assertEquals(Optional.of(InetAddress.getByName("10.0.0.5")), ephemeral.address());
    }

    @Test
    void unresolvedAddressesMatchNothingAndAreNeverLookedUp() throws Exception {
        RuleSet set = RuleSet.parse("u.conf", "rdma connect * *\nrdma accept * *\n");
        InetSocketAddress unresolved = InetSocketAddress.createUnresolved("no-such-host.invalid", 80);
        assertEquals(Optional.empty(), set.matchConnect(unresolved));
        assertEquals(Optional.empty(), set.matchAccept(unresolved));
        assertFalse(set.mayAccept(unresolved));
    }

    @Test
    void emptySetMatchesNothing() throws Exception {
        RuleSet empty = RuleSet.empty();
        assertEquals(Optional.empty(), empty.matchConnect(at("127.0.0.1", 80)));
        assertEquals(Optional.empty(), empty.matchAccept(at("127.0.0.1", 80)));
        assertEquals(Optional.empty(), empty.matchBind(Provider.RDMA, 0));
    }

    @Test
    void aRepeatedEndpointGetsTheSameAnswerAsAFreshOneAndAnotherEndpointItsOwn() throws Exception {
        // the last match is remembered by endpoint (RuleSet.Memo): alternating endpoints, the same port on
        // another address, the same address on another port, an IPv4-mapped IPv6 form: each its own answer
        RuleSet set = RuleSet.parse("m.conf", String.join("\n",
                "shm connect 127.0.0.1 5000",
                "shm connect 127.0.0.2 5000-5001",
                "shm accept 127.0.0.1 5000 all"));
        for (int i = 0; i < 3; i++) {
            assertEquals(1, line(set.matchConnect(at("127.0.0.1", 5000))));
            assertEquals(1, line(set.matchConnect(at("127.0.0.1", 5000))));
            assertEquals(0, line(set.matchConnect(at("127.0.0.1", 5001))));
            assertEquals(2, line(set.matchConnect(at("127.0.0.2", 5001))));
            assertEquals(1, line(set.matchConnect(new InetSocketAddress(mapped(127, 0, 0, 1), 5000))));
            assertEquals(0, line(set.matchConnect(new InetSocketAddress(mapped(127, 0, 0, 3), 5000))));
            assertEquals(0, line(set.matchConnect(at("127.0.0.3", 5000))));
            assertEquals(3, line(set.matchAccept(at("127.0.0.1", 5000))));
            assertEquals(0, line(set.matchAccept(at("127.0.0.2", 5000))));
            assertEquals(0, line(set.matchAccept(InetSocketAddress.createUnresolved("localhost", 5000))));
        }
    }
}
