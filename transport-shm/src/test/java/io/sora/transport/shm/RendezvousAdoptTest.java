package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.ConnectionKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kept channel handed back to the listener ({@link RendezvousListener#adopt}) while its previous key,
 * cancelled when its last HELLO was read, is not yet deregistered by a select: it waits for the thread's
 * next turn and is never dropped (it was: its client's next HELLO went unread, and the client got
 * "Connection reset" and stayed on TCP).
 */
class RendezvousAdoptTest {
    @TempDir
    Path tmp;

    @Test
    void anAdoptionWhoseOldKeyIsStillCancelledWaitsForTheNextTurnAndIsRead() throws Exception {
        List<Wire.Hello> hellos = new CopyOnWriteArrayList<>();
        List<SocketChannel> channels = new CopyOnWriteArrayList<>();
        RendezvousListener.HelloHandler handler = (ch, hello) -> {
            hellos.add(hello);
            channels.add(ch);
        };
        Path sock = tmp.resolve("port.sock");
        RendezvousListener listener = new RendezvousListener(sock, 1, handler, false); // no thread: no select unless turn()
        try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            client.connect(UnixDomainSocketAddress.of(sock));
            ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getLoopbackAddress(), 40001),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 1));
            write(client, Wire.encode(new Wire.Hello(key, 4096)));
            assertTrue(listener.catchUp());
            assertEquals(1, hellos.size(), "the first HELLO, read by the catch-up (its key cancelled)");
            SocketChannel server = channels.get(0);

            // the connection ended and both ends kept the channel: back to the listener, old key not yet gone
            assertTrue(listener.adopt(server, ByteBuffer.allocate(0), () -> false));
            write(client, Wire.encode(new Wire.Hello(key, 8192)));
            listener.registerAdoptionsNow(); // as the thread did after a select that began before the cancel
            assertTrue(server.isOpen(), "the kept channel is not dropped while its old key waits to go");
            assertEquals(1, hellos.size());

            listener.turn(); // the next select deregisters the old key; the adoption registers and reads
            assertEquals(2, hellos.size(), "the client's next HELLO is read");
            assertEquals(8192, hellos.get(1).receiveRing());
            assertTrue(server.isOpen());
        } finally {
            listener.close();
        }
    }

    private static void write(SocketChannel ch, ByteBuffer b) throws java.io.IOException {
        while (b.hasRemaining()) ch.write(b);
    }
}
