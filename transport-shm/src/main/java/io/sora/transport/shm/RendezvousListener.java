package io.sora.transport.shm;

import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;

/**
 * The rendezvous socket of one {@link ShmServerBinding} and its thread ({@code sora-shm-listen-<port>},
 * daemon): accepts Unix-domain connections, reads each HELLO without letting a slow client hold up
 * the others, and hands complete ones to the binding. A client that sends no complete HELLO within
 * {@link #HELLO_TIMEOUT_MILLIS} is dropped.
 */
final class RendezvousListener implements Runnable {
    interface HelloHandler {
        void onHello(SocketChannel channel, Wire.Hello hello);

        /** An ANNOUNCE: a HELLO on this channel will follow the client's TCP connect. Answers NOTED. */
        default void onAnnounce(SocketChannel channel) throws IOException {
        }

        /** An announced channel ended (EOF, error, timeout or listener closed) without a HELLO. */
        default void onWithdrawn(SocketChannel channel) {
        }
    }

    static final long HELLO_TIMEOUT_MILLIS = 2000;

    private final Path path;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final HelloHandler handler;
    private final Thread thread;
    private volatile boolean closed;

    /** Binds {@code path} (replacing a stale socket file of a dead JVM) and starts the thread. */
    RendezvousListener(Path path, int port, HelloHandler handler) throws IOException {
        this.path = path;
        this.handler = handler;
        this.server = bind(path);
        try {
            Files.setPosixFilePermissions(path, ShmDirectory.OWNER_ONLY_FILE);
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            Files.deleteIfExists(path);
            throw e;
        }
        thread = new Thread(this, "sora-shm-listen-" + port);
        thread.setDaemon(true);
        thread.start();
    }

    private static ServerSocketChannel bind(Path path) throws IOException {
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(path);
        ServerSocketChannel ssc = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            try {
                ssc.bind(address);
            } catch (BindException e) {
                if (isLive(address)) {
                    throw new IOException("another sora shm listener is live at " + path, e);
                }
                Files.deleteIfExists(path); // stale: left by a JVM that died
                ssc.bind(address);
            }
            return ssc;
        } catch (IOException | RuntimeException e) {
            ssc.close();
            throw e;
        }
    }

    private static boolean isLive(UnixDomainSocketAddress address) throws IOException {
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(address);
            return true;
        } catch (ConnectException refused) {
            return false;
        }
    }

    Path path() {
        return path;
    }

    /** A HELLO being read: bytes so far, when the connection arrived, whether it announced itself. */
    private static final class Partial {
        final ByteBuffer acc = ByteBuffer.allocate(Wire.MAX_FRAME);
        final long since = System.nanoTime();
        boolean announced;
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                boolean partials = selector.keys().size() > 1;
                if (partials) {
                    selector.select(HELLO_TIMEOUT_MILLIS / 4);
                } else {
                    selector.select(); // idle listener: no timed wake-ups
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) continue;
                    if (key.isAcceptable()) accept();
                    else if (key.isReadable()) read(key);
                }
                if (partials) dropSlowClients();
            }
        } catch (IOException | RuntimeException e) {
            // The listener cannot go on; clients find no answer and stay on TCP.
        } finally {
            release();
        }
    }

    private void accept() throws IOException {
        SocketChannel ch;
        while ((ch = server.accept()) != null) {
            ch.configureBlocking(false);
            SelectionKey key = ch.register(selector, SelectionKey.OP_READ, new Partial());
            // An ANNOUNCE is written before the client's TCP connect: answer it now, not a select later.
            read(key);
        }
    }

    private void read(SelectionKey key) {
        SocketChannel ch = (SocketChannel) key.channel();
        Partial p = (Partial) key.attachment();
        try {
            for (;;) {
                if (ch.read(p.acc) < 0) throw new IOException("EOF before HELLO");
                Wire.Message m = Wire.tryDecode(p.acc);
                if (m == null) {
                    if (!p.acc.hasRemaining()) throw new IOException("HELLO too long");
                    return;
                }
                if (m instanceof Wire.Announce && !p.announced) {
                    p.announced = true;
                    handler.onAnnounce(ch);
                    continue; // a HELLO may follow in the same read
                }
                key.cancel();
                if (!(m instanceof Wire.Hello hello)) throw new IOException("expected HELLO, got " + m.getClass().getSimpleName());
                if (p.acc.position() != 0) throw new IOException("bytes after HELLO before the OFFER");
                handler.onHello(ch, hello);
                return;
            }
        } catch (IOException | RuntimeException e) {
            key.cancel();
            dropped(ch, p);
        }
    }

    private void dropped(SocketChannel ch, Partial p) {
        closeQuietly(ch);
        if (p.announced) handler.onWithdrawn(ch);
    }

    private void dropSlowClients() {
        long now = System.nanoTime();
        for (SelectionKey key : selector.keys()) {
            if (key.attachment() instanceof Partial p && now - p.since > HELLO_TIMEOUT_MILLIS * 1_000_000L) {
                key.cancel();
                dropped((SocketChannel) key.channel(), p);
            }
        }
    }

    private void release() {
        // Cancelled keys belong to channels already handed to the binding: leave those open.
        for (SelectionKey key : selector.keys()) {
            if (!key.isValid()) continue;
            if (key.attachment() instanceof Partial p) dropped((SocketChannel) key.channel(), p);
            else closeQuietly(key.channel());
        }
        closeQuietly(selector);
        closeQuietly(server);
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // left for the next listen() on this port, which replaces stale files
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }

    /** Stops the thread; it closes the socket and removes the socket file. Idempotent. */
    void close() {
        closed = true;
        selector.wakeup();
    }

    /** For tests and orderly shutdown: waits (bounded) for the thread to finish. */
    void join(long millis) throws InterruptedException {
        thread.join(millis);
    }
}
