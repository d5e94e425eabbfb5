package io.sora.agent.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ProcessSocketsTest {
    @Test
    void theInodeIsReadWithoutParsingTheLine() {
        String v4 = "   0: 0100007F:FF9C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0";
        assertEquals(12345, ProcessSockets.inodeOf(v4));
        assertEquals(ProcessSockets.parse(v4).inode(), ProcessSockets.inodeOf(v4));
        assertEquals(777, ProcessSockets.inodeOf(
                "   1: 0000000000000000FFFF00000100007F:B0A1 0000000000000000FFFF00000100007F:FF9C 01 00000000:00000000 00:00000000 00000000     0        0 777 1 0"));
        assertEquals(-1, ProcessSockets.inodeOf("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"));
        assertEquals(-1, ProcessSockets.inodeOf("   0: 0100007F:FF9C"));
        assertEquals(-1, ProcessSockets.inodeOf(""));
    }

    @Test
    void parsesIpv4AndIpv6Lines() throws Exception {
        ProcessSockets.Row v4 = ProcessSockets.parse(
                "   0: 0100007F:FF9C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0");
        assertEquals(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0xFF9C), v4.local());
        assertEquals(0x0A, v4.state());
        assertEquals(12345, v4.inode());
        ProcessSockets.Row mapped = ProcessSockets.parse(
                "   1: 0000000000000000FFFF00000100007F:B0A1 0000000000000000FFFF00000100007F:FF9C 01 00000000:00000000 00:00000000 00000000     0        0 777 1 0");
        assertEquals(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0xB0A1), mapped.local(), "IPv4-mapped comes back as IPv4");
        assertEquals(1, mapped.state());
        ProcessSockets.Row any6 = ProcessSockets.parse(
                "   2: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 99 1 0");
        assertTrue(any6.local().getAddress().isAnyLocalAddress());
        ProcessSockets.Row loop6 = ProcessSockets.parse(
                "   3: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 98 1 0");
        assertEquals(InetAddress.getByName("::1"), loop6.local().getAddress());
        assertNull(ProcessSockets.parse("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"));
    }

    @Test
    void findsThisProcessesListeningAndEstablishedSockets() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "Linux /proc only");
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        try (ServerSocket server = new ServerSocket(0, 5, lo); Socket client = new Socket(lo, server.getLocalPort());
             Socket accepted = server.accept()) {
            ProcessSockets now = ProcessSockets.read();
            assertTrue(now.listening().contains(new InetSocketAddress(lo, server.getLocalPort())), now.listening().toString());
            assertTrue(now.established().contains(new ProcessSockets.Connection(
                    (InetSocketAddress) accepted.getLocalSocketAddress(), (InetSocketAddress) accepted.getRemoteSocketAddress())),
                    now.established().toString());
        }
        try (ServerSocket gone = new ServerSocket(0, 5, lo)) {
            int port = gone.getLocalPort();
            gone.close();
            assertTrue(ProcessSockets.read().listening().stream().noneMatch(a -> a.getPort() == port));
        }
    }
}
