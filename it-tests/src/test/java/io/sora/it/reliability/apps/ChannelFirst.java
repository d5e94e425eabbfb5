package io.sora.it.reliability.apps;

import java.io.EOFException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Binds a server channel and connects a client channel to it as the first thing {@code main} does,
 * exchanges four bytes, and prints {@code PATH <client> <server>}. With the argument
 * {@code after-warmup} it connects only once the agent's background warm-up thread ({@code sora-warmup},
 * begun by the bind when an shm rule may match) has ended (at most 60 s), and first prints
 * {@code WARMUP ended|running|none}.
 */
public final class ChannelFirst {
    private ChannelFirst() {
    }

    public static void main(String[] args) throws Exception {
        boolean afterWarmup = args.length > 0 && args[0].equals("after-warmup");
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(Apps.LOOPBACK, 0));
            if (afterWarmup) {
                Thread warmup = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("sora-warmup")).findFirst().orElse(null);
                if (warmup != null) warmup.join(60_000);
                System.out.println("WARMUP " + (warmup == null ? "none" : warmup.isAlive() ? "running" : "ended"));
            }
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
