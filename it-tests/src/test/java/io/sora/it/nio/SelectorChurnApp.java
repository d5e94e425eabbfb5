package io.sora.it.nio;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Random;

/**
 * For {@code SelectorChurnIT}: a selector echo server (non-blocking accept, reads and writes, {@code OP_WRITE}
 * while its answer does not fit) in one thread, and in the main thread {@code <connections>} connections one
 * after another, by turns a blocking {@code Socket} client and a selector-driven {@code SocketChannel} client,
 * each sending a random message of 1 B to 300 KB (several times a ring), reading its echo and checking it,
 * then closing. Prints {@code EXACT <n>} (connections whose echo was exact) and {@code DONE}. Arguments: port,
 * connections.
 */
public final class SelectorChurnApp {
    private static final int[] SIZES = {1, 1000, 70_000, 300_000};
    /**
     * {@code closer} mode: each message is preceded by its length; the server, once it has echoed it, leaves
     * the connection registered for reading (its selector then sleeps armed on it: the client sends nothing
     * more) and has another thread close it a moment later, while the selector waits; the client reads the
     * echo, then the end. So a connection's channel closes under a selector armed on it, and its segment is
     * kept for the next connection while that selector has yet to wake.
     */
    private static boolean closer;
    private static final java.util.concurrent.ScheduledExecutorService CLOSER =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "closer");
                t.setDaemon(true);
                return t;
            });

    private SelectorChurnApp() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        closer = args.length > 2 && args[2].equals("closer");
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", port), 128);
        Thread serving = new Thread(() -> serve(server), "selector-server");
        serving.setDaemon(true);
        serving.start();
        int exact = 0;
        for (int i = 0; i < n; i++) {
            Random r = new Random(i);
            byte[] msg = new byte[SIZES[i % SIZES.length] + r.nextInt(50)];
            r.nextBytes(msg);
            byte[] back = (i & 1) == 0 ? blocking(port, msg) : selecting(port, msg);
            if (Arrays.equals(msg, back)) exact++;
            else System.out.println("DIFFERS " + i + " (" + msg.length + " bytes sent, " + back.length + " back)");
        }
        System.out.println("EXACT " + exact);
        server.close();
        System.out.println("DONE");
    }

    private static byte[] blocking(int port, byte[] msg) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            Thread writer = new Thread(() -> {
                try {
                    if (closer) s.getOutputStream().write(ByteBuffer.allocate(4).putInt(msg.length).array());
                    s.getOutputStream().write(msg);
                } catch (IOException e) {
                    // the read below fails too
                }
            }, "blocking-writer");
            writer.start();
            byte[] back = new byte[msg.length];
            new DataInputStream(s.getInputStream()).readFully(back);
            join(writer);
            if (closer && s.getInputStream().read() != -1) return new byte[0]; // more than the echo: wrong
            return back;
        }
    }

    private static byte[] selecting(int port, byte[] msg) throws IOException {
        try (Selector sel = Selector.open(); SocketChannel ch = SocketChannel.open()) {
            ch.configureBlocking(false);
            ch.connect(new InetSocketAddress("127.0.0.1", port));
            SelectionKey key = ch.register(sel, SelectionKey.OP_CONNECT);
            ByteBuffer out = closer ? ByteBuffer.allocate(4 + msg.length).putInt(msg.length).put(msg).flip() : ByteBuffer.wrap(msg);
            ByteBuffer in = ByteBuffer.allocate(msg.length);
            long deadline = System.nanoTime() + 30_000_000_000L;
            boolean ended = !closer;
            while ((in.hasRemaining() || !ended) && System.nanoTime() < deadline) {
                sel.select(1000);
                sel.selectedKeys().clear();
                if (key.isConnectable() && ch.finishConnect()) key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                if (!ch.isConnected()) continue;
                if (out.hasRemaining()) ch.write(out);
                if (!out.hasRemaining()) key.interestOps(SelectionKey.OP_READ);
                if (!in.hasRemaining()) {
                    // the echo is whole: in closer mode the server's close must follow, and nothing else
                    ByteBuffer extra = ByteBuffer.allocate(1);
                    int r = ch.read(extra);
                    if (r > 0) return new byte[0];
                    if (r < 0) ended = true;
                    continue;
                }
                if (ch.read(in) < 0) break;
            }
            return ended ? Arrays.copyOf(in.array(), in.position()) : new byte[0];
        }
    }

    private static void join(Thread t) {
        try {
            t.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A server connection's state: what waits to be written, and (closer mode) the length still to come. */
    private static final class Conn {
        final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();
        final ByteBuffer header = closer ? ByteBuffer.allocate(4) : ByteBuffer.allocate(0);
        long left = closer ? -1 : Long.MAX_VALUE;
        boolean closing;
    }

    /** Echoes every connection: what it reads is queued and written back, with OP_WRITE while it waits. */
    private static void serve(ServerSocketChannel server) {
        try (Selector sel = Selector.open()) {
            server.configureBlocking(false);
            server.register(sel, SelectionKey.OP_ACCEPT);
            ByteBuffer buf = ByteBuffer.allocate(32 * 1024);
            while (server.isOpen()) {
                sel.select(500);
                for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    it.remove();
                    try {
                        if (!k.isValid()) continue;
                        if (k.isAcceptable()) {
                            SocketChannel c;
                            while ((c = server.accept()) != null) {
                                c.configureBlocking(false);
                                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                                c.register(sel, SelectionKey.OP_READ, new Conn());
                            }
                            continue;
                        }
                        SocketChannel c = (SocketChannel) k.channel();
                        Conn conn = (Conn) k.attachment();
                        ArrayDeque<ByteBuffer> pending = conn.pending;
                        if (k.isReadable()) {
                            buf.clear();
                            if (closer && conn.header.hasRemaining()) buf.limit(conn.header.remaining());
                            int r = c.read(buf);
                            if (r < 0) {
                                k.cancel();
                                c.close();
                                continue;
                            }
                            if (r > 0 && closer && conn.header.hasRemaining()) {
                                buf.flip();
                                conn.header.put(buf);
                                if (!conn.header.hasRemaining()) conn.left = conn.header.flip().getInt();
                            } else if (r > 0) {
                                buf.flip();
                                ByteBuffer copy = ByteBuffer.allocate(r);
                                copy.put(buf).flip();
                                pending.add(copy);
                                conn.left -= r;
                            }
                        }
                        while (!pending.isEmpty()) {
                            ByteBuffer b = pending.peek();
                            c.write(b);
                            if (b.hasRemaining()) break;
                            pending.poll();
                        }
                        // stop reading while an answer waits to be written: the client reads it meanwhile
                        k.interestOps(pending.isEmpty() ? SelectionKey.OP_READ : SelectionKey.OP_WRITE);
                        if (closer && pending.isEmpty() && !conn.header.hasRemaining() && conn.left == 0 && !conn.closing) {
                            // echoed whole: still registered for reading (nothing comes: the selector sleeps armed
                            // on it), closed by another thread a moment later
                            conn.closing = true;
                            CLOSER.schedule(() -> {
                                try {
                                    c.close();
                                } catch (IOException ignored) {
                                    // closed anyway
                                }
                            }, 1, java.util.concurrent.TimeUnit.MILLISECONDS);
                        }
                    } catch (IOException | java.nio.channels.CancelledKeyException e) {
                        // the latter: the closer thread closed the channel between the key's validity check and
                        // its readyOps (over TCP as well), which killed this loop once in a local run
                        k.cancel();
                        try {
                            k.channel().close();
                        } catch (IOException ignored) {
                            // closing anyway
                        }
                    }
                }
            }
        } catch (IOException e) {
            // the server channel closed
        }
    }
}
