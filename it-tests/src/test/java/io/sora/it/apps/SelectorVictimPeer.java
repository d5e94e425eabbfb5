package io.sora.it.apps;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * For the peer-death test of a selector's channel: {@code server} prints {@code PORT <n>}, accepts one
 * channel, registers it with a selector for reading and echoes what comes, printing {@code PATH <path>}
 * and then {@code ECHOED <n>} after each echo; when the channel ends it prints {@code EOF} (read -1) or
 * {@code RESET <exception>} and exits 0. {@code client <port>} connects a blocking socket, sends
 * {@code rounds} messages and reads their echoes, prints {@code READY}, and then waits (to be killed:
 * the server's selector is asleep then, armed on the connection).
 */
public final class SelectorVictimPeer {
    private SelectorVictimPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server();
        } else {
            client(Integer.parseInt(args[1]));
        }
    }

    private static void server() throws IOException {
        try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             Selector selector = Selector.open()) {
            System.out.println("PORT " + ((InetSocketAddress) ss.getLocalAddress()).getPort());
            try (SocketChannel ch = ss.accept()) {
                System.out.println("PATH " + BridgePath.of(ch));
                ch.configureBlocking(false);
                ch.register(selector, SelectionKey.OP_READ);
                ByteBuffer buf = ByteBuffer.allocate(4096);
                long echoed = 0;
                // bounded by the test's timeout of this JVM; each turn waits in select
                for (int turns = 0; turns < 1_000_000; turns++) {
                    selector.select();
                    selector.selectedKeys().clear();
                    int n;
                    try {
                        n = ch.read(buf.clear());
                    } catch (IOException e) {
                        System.out.println("RESET " + e);
                        return;
                    }
                    if (n < 0) {
                        System.out.println("EOF");
                        return;
                    }
                    buf.flip();
                    while (buf.hasRemaining()) ch.write(buf);
                    echoed += n;
                    if (n > 0) System.out.println("ECHOED " + echoed);
                }
                System.out.println("TOO MANY TURNS");
            }
        }
    }

    private static void client(int port) throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            byte[] msg = new byte[1000];
            for (int round = 0; round < 20; round++) {
                java.util.Arrays.fill(msg, (byte) round);
                s.getOutputStream().write(msg);
                int got = 0;
                while (got < msg.length) {
                    int n = s.getInputStream().read(new byte[msg.length - got]);
                    if (n < 0) throw new IOException("EOF after " + got);
                    got += n;
                }
            }
            System.out.println("READY");
            Thread.sleep(120_000); // killed before this ends
        }
    }
}
