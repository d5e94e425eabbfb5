package io.sora.it.ops;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * As {@link EchoServerApp}, as an NIO server: one thread, one {@link Selector}, non-blocking channels;
 * each client's bytes are echoed (what a write cannot take yet waits for {@code OP_WRITE}, reading
 * pauses meanwhile). Started WITHOUT the agent; prints {@code READY}; exits 0 at the deadline.
 *
 * <p>Arguments: {@code <port> <deadline seconds>}.
 */
public final class NioEchoServerApp {
    private NioEchoServerApp() {
    }

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        long deadline = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
        try (Selector selector = Selector.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 50);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println("READY");
            while (System.nanoTime() < deadline) { // bounded: the deadline
                selector.select(200);
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    try {
                        if (key.isAcceptable()) {
                            SocketChannel ch = server.accept();
                            if (ch == null) continue;
                            ch.configureBlocking(false);
                            ch.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(8192));
                        } else {
                            echo(key);
                        }
                    } catch (IOException e) {
                        key.cancel();
                        key.channel().close(); // this client went away
                    }
                }
            }
        }
        System.out.println("DEADLINE");
    }

    /** Reads what is there and writes it back; unwritten bytes wait for OP_WRITE with reading paused. */
    private static void echo(SelectionKey key) throws IOException {
        SocketChannel ch = (SocketChannel) key.channel();
        ByteBuffer buf = (ByteBuffer) key.attachment();
        if (key.isReadable() && buf.position() == 0) {
            int n = ch.read(buf);
            if (n < 0) {
                key.cancel();
                ch.close();
                return;
            }
        }
        buf.flip();
        ch.write(buf);
        buf.compact();
        key.interestOps(buf.position() > 0 ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }
}
