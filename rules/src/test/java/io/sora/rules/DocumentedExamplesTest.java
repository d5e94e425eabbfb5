package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The worked examples of docs/configuration.md (copied here verbatim) behave as the page says. */
class DocumentedExamplesTest {

    private static InetSocketAddress at(String literal, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(literal), port);
    }

    private static InetAddress mapped(String ipv4) throws Exception {
        byte[] b = new byte[16];
        b[10] = (byte) 0xff;
        b[11] = (byte) 0xff;
        System.arraycopy(InetAddress.getByName(ipv4).getAddress(), 0, b, 12, 4);
        return Inet6Address.getByAddress(null, b, -1);
    }

    @Test
    void shmPairOnLoopback() throws Exception {
        RuleSet set = RuleSet.parse("shm.conf", """
                # same-host pair on loopback
                shm  accept   127.0.0.1  65444  127.0.0.1
                shm  connect  127.0.0.1  65444
                """);
        Rule accept = set.matchAccept(at("127.0.0.1", 65444)).orElseThrow();
        assertEquals(Provider.SHM, accept.provider());
        assertTrue(accept.allowsClient(InetAddress.getByName("127.0.0.1")));
        assertEquals(Provider.SHM, set.matchConnect(at("127.0.0.1", 65444)).orElseThrow().provider());
        assertTrue(set.mayAccept(at("0.0.0.0", 65444)), "new ServerSocket(65444) is covered");
    }

    @Test
    void ipv6CidrAndOptions() throws Exception {
        RuleSet set = RuleSet.parse("cluster.conf", """
                # same host: shared memory, big buffers, short pairing wait
                shm   accept   ::1          7000-7010   sndbuf=1m rcvbuf=1m wait=20ms
                shm   accept   127.0.0.1    7000-7010   sndbuf=1m rcvbuf=1m wait=20ms
                # cluster: RDMA on any local address, from the two cluster networks only
                rdma  accept   *            7000-7010   fd00:10::/64  10.20.0.0/16  sndbuf=256k rcvbuf=256k
                # this host as a client of the storage nodes
                rdma  connect  [fd00:20::5] 9000,9443,9500-9509   wait=250ms
                rdma  connect  fd00:20::6   9000,9443,9500-9509   wait=250ms
                """);
        for (String loopback : new String[] {"::1", "127.0.0.1"}) {
            Rule r = set.matchAccept(at(loopback, 7001)).orElseThrow();
            assertEquals(Provider.SHM, r.provider());
            assertEquals(1 << 20, r.options().sendBufferSize());
            assertEquals(Duration.ofMillis(20), r.options().fallbackWait());
        }
        Rule cluster = set.matchAccept(at("fd00:10::1", 7003)).orElseThrow();
        assertEquals(5, cluster.line());
        assertEquals(256 * 1024, cluster.options().receiveBufferSize());
        assertTrue(cluster.allowsClient(InetAddress.getByName("fd00:10::42")));

        Rule dualStack = set.matchAccept(new InetSocketAddress(mapped("10.20.0.1"), 7003)).orElseThrow();
        assertEquals(5, dualStack.line());
        assertTrue(dualStack.allowsClient(mapped("10.20.3.4")));
        assertFalse(cluster.allowsClient(InetAddress.getByName("fd00:99::1")));

        Rule storage = set.matchConnect(at("fd00:20::5", 9505)).orElseThrow();
        assertEquals(Duration.ofMillis(250), storage.options().fallbackWait());
        assertEquals(Optional.empty(), set.matchConnect(at("fd00:20::5", 9001)));
    }
}
