package io.sora.examples.bench;

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
 * The field benchmark's NIO server child, the way an NIO server is written: one thread, one
 * {@link Selector}, a non-blocking {@link ServerSocketChannel} accepting {@code conns} connections,
 * each echoing every {@code size}-byte message (read it whole, write it whole, {@code OP_WRITE} only
 * while a write is incomplete) until the client closes; then checks each channel's path and prints
 * {@code DONE served=N}. The clients are {@link FieldClient}'s blocking sockets.
 *
 * <pre>FieldNioServer address=IP port=N size=N conns=N path=tcp|shm agent=yes|no timeout=S</pre>
 */
public final class FieldNioServer {
    private FieldNioServer() {
    }

    /** One connection's message buffer and count. */
    private static final class Conn {
        final ByteBuffer buf;
        final int id;
        long n;

        Conn(int size, int id) {
            this.buf = ByteBuffer.allocateDirect(size);
            this.id = id;
        }
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FieldNioServer", args);
        a.startWatchdog();
        int size = a.getInt("size");
        int conns = a.getInt("conns");
        if (size < Wire.MIN_SIZE || conns < 1) {
            a.fail("need size >= " + Wire.MIN_SIZE + " and conns >= 1, got size=" + size + " conns=" + conns);
        }
        long served = 0;
        int accepted = 0;
        int closed = 0;
        try (Selector selector = Selector.open();
             ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getByName(a.get("address")), a.getInt("port")), 64);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println("READY port=" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            while (closed < conns) { // bounded by the watchdog (timeout=S)
                selector.select();
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) continue;
                    if (key.isAcceptable()) {
                        SocketChannel ch;
                        while (accepted < conns && (ch = server.accept()) != null) {
                            ch.configureBlocking(false);
                            ch.register(selector, SelectionKey.OP_READ, new Conn(size, accepted++));
                        }
                        if (accepted == conns) key.cancel();
                        continue;
                    }
                    SocketChannel ch = (SocketChannel) key.channel();
                    Conn c = (Conn) key.attachment();
                    if (key.isWritable()) { // the rest of an echo that did not fit at once
                        ch.write(c.buf);
                        if (!c.buf.hasRemaining()) {
                            c.buf.clear();
                            c.n++;
                            key.interestOps(SelectionKey.OP_READ);
                        }
                        continue;
                    }
                    int r = ch.read(c.buf);
                    if (r < 0) {
                        if (c.buf.position() != 0) {
                            a.fail("connection " + c.id + ": the client closed inside message " + c.n + " after "
                                    + c.buf.position() + " of " + size + " bytes");
                        }
                        a.checkPath(ch);
                        served += c.n;
                        closed++;
                        key.cancel();
                        ch.close();
                        continue;
                    }
                    if (!c.buf.hasRemaining()) {
                        c.buf.flip();
                        ch.write(c.buf);
                        if (c.buf.hasRemaining()) {
                            key.interestOps(SelectionKey.OP_WRITE);
                        } else {
                            c.buf.clear();
                            c.n++;
                        }
                    }
                }
            }
        }
        System.out.println("DONE served=" + served);
    }
}
