package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** parse(Path): JSOR's sample files on disk, source names, missing and non-UTF-8 files. */
class RuleSetFileTest {

    @TempDir
    Path dir;

    @Test
    void twoFilesTogetherKeepTheirOrderAndTheirOrigins() throws Exception {
        Path net = Files.writeString(dir.resolve("net.conf"), "shm connect 127.0.0.1 7000\n");
        Path nio = Files.writeString(dir.resolve("nio.conf"), "# channels\nshm connect 127.0.0.1 7001\nshm accept 127.0.0.1 7002\n");
        RuleSet both = RuleSet.parse(net).and(RuleSet.parse(nio));
        assertEquals(3, both.rules().size());
        assertEquals(net + ":1", both.rules().get(0).source() + ":" + both.rules().get(0).line());
        assertEquals(nio + ":2", both.rules().get(1).source() + ":" + both.rules().get(1).line());
        assertEquals(nio + ":3", both.rules().get(2).source() + ":" + both.rules().get(2).line());
        assertEquals(both.rules(), RuleSet.empty().and(both).rules());
        assertEquals(both.rules(), both.and(RuleSet.empty()).rules());
    }

    @Test
    void jsorServerAndClientFilesFromDisk() throws Exception {
        Path server = Files.writeString(dir.resolve("rdma_server.conf"),
                "rdma    accept    192.168.1.1    65444    192.168.1.3    192.168.1.4     # rdma_server.conf\n");
        Path client = Files.writeString(dir.resolve("rdma_client.conf"),
                "rdma    connect   192.168.1.1    65444                                    # rdma_client.conf\n"
                + "rdma    bind      0.0.0.0        65333      # client end binds its RDMA connection to port 65333\n");
        RuleSet s = RuleSet.parse(server);
        assertEquals(server.toString(), s.source());
        Rule accept = s.matchAccept(new InetSocketAddress(InetAddress.getByName("192.168.1.1"), 65444)).orElseThrow();
        assertEquals(server + ":1: rdma accept 192.168.1.1 65444 192.168.1.3 192.168.1.4", accept.toString());

        RuleSet c = RuleSet.parse(client);
        assertEquals(2, c.rules().size());
        assertTrue(c.matchConnect(new InetSocketAddress(InetAddress.getByName("192.168.1.1"), 65444)).isPresent());
        assertEquals(65333, c.matchBind(Provider.RDMA, 65333).orElseThrow().ports().lowest());
    }

    @Test
    void errorMessagesNameThePathAsGiven() throws Exception {
        Files.writeString(dir.resolve("bad.conf"), "rdma connect 192.168.1.1 65a\n");
        Files.createDirectory(dir.resolve("sub"));
        Path relative = dir.resolve("sub").resolve("..").resolve("bad.conf"); // kept as given, not normalized
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class, () -> RuleSet.parse(relative));
        assertEquals(relative + ":1:26: port '65a' is not a number", e.getMessage());
        assertEquals(relative.toString(), e.errors().get(0).source());
    }

    @Test
    void byteOrderMarkAndCrLfFromDisk() throws Exception {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        byte[] body = "shm accept 127.0.0.1 65444\r\nshm connect 127.0.0.1 65444\r\n".getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[bom.length + body.length];
        System.arraycopy(bom, 0, all, 0, bom.length);
        System.arraycopy(body, 0, all, bom.length, body.length);
        Path f = Files.write(dir.resolve("shm.conf"), all);
        RuleSet set = RuleSet.parse(f);
        assertEquals(2, set.rules().size());
        assertEquals("shm accept 127.0.0.1 65444", set.rules().get(0).text());
        assertEquals("shm connect 127.0.0.1 65444", set.rules().get(1).text());
    }

    @Test
    void missingFileIsAnIOExceptionNamingThePath() {
        Path missing = dir.resolve("no-such.conf");
        IOException e = assertThrows(IOException.class, () -> RuleSet.parse(missing));
        assertTrue(e instanceof NoSuchFileException, e.toString());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    }

    @Test
    void bytesThatAreNotUtf8InACommentAreIgnored() throws Exception {
        Path f = Files.write(dir.resolve("latin1.conf"), concat("shm accept 127.0.0.1 7104 # serveur ".getBytes(StandardCharsets.US_ASCII),
                new byte[] {(byte) 0xE9, '\n'}));
        assertEquals(1, RuleSet.parse(f).rules().size());
    }

    @Test
    void bytesThatAreNotUtf8InARuleNameTheirLineAndColumn() throws Exception {
        Path f = Files.write(dir.resolve("latin1.conf"), concat("# fine\nshm accept 127.0.0.1 7104 caf".getBytes(StandardCharsets.US_ASCII),
                new byte[] {(byte) 0xE9, '\n'}));
        RuleSyntaxException e = assertThrows(RuleSyntaxException.class, () -> RuleSet.parse(f));
        assertEquals(f + ":2:30: bytes that are not UTF-8 text at column 30: save the file as UTF-8 (only a comment may hold"
                + " text of another encoding)", e.errors().get(0).format());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
