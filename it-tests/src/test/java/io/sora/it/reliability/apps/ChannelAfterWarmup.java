package io.sora.it.reliability.apps;

import java.io.EOFException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Binds a server channel, waits until the agent's background warm-up thread ({@code sora-warmup},
 * begun by that bind when an shm rule may match) has ended (at most 60 s), then connects a client
 * channel to it, exchanges four bytes, and prints {@code PATH <client> <server>} and
 * {@code WARMUP ended|none}.
 */
public final class ChannelAfterWarmup {
    private ChannelAfterWarmup() {
    }

    public static void main(String[] args) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(Apps.LOOPBACK, 0));
            Thread warmup = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("sora-warmup")).findFirst().orElse(null);
            if (warmup != null) warmup.join(60_000);
            System.out.println("WARMUP " + (warmup == null ? "none" : warmup.isAlive() ? "running" : "ended"));
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress()); SocketChannel s = server.accept()) {
                c.write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer b = ByteBuffer.allocate(4);
                for (int i = 0; i < 1000 && b.hasRemaining(); i++) {
                    if (s.read(b) < 0) throw new EOFException("EOF before 4 bytes");
                }
                if (!"ping".equals(new String(b.array(), StandardCharsets.US_ASCII))) {
                    throw new IllegalStateException("read " + new String(b.array(), StandardCharsets.US_ASCII));
                }
                System.out.println("PATH " + Apps.path(c.socket()) + " " + Apps.path(s.socket()));
            }
        }
    }
}
