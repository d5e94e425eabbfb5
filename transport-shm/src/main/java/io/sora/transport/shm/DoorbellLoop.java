package io.sora.transport.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The one daemon thread ({@code sora-shm-doorbell}) that reads every shm control channel in the JVM:
 * doorbells, COMMIT, and end-of-file (peer closed or died). It blocks in {@link Selector#select}
 * without a timeout, so idle connections cost nothing. Started on first use, lives for the JVM.
 */
final class DoorbellLoop {
    /** What the loop calls when a registered channel is readable. */
    interface Handler {
        /**
         * Reads what is there using {@code scratch} (cleared, owned by the loop thread).
         * @return false when the channel is finished (EOF or error): its key is cancelled
         */
        boolean onReadable(SocketChannel channel, ByteBuffer scratch);
    }

    private static final DoorbellLoop INSTANCE = new DoorbellLoop();

    private final Queue<Object[]> registrations = new ConcurrentLinkedQueue<>();
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(256);
    private final Consumer<SelectionKey> dispatch = this::dispatch;
    private Selector selector;
    private Thread thread;
    /** Set at JVM shutdown: the loop ends and no new one starts. */
    private volatile boolean shutDown;

    DoorbellLoop() { // one per JVM (get()); tests make their own
    }

    static DoorbellLoop get() {
        return INSTANCE;
    }

    /** Registers a non-blocking channel; the handler runs on the loop thread. */
    void register(SocketChannel channel, Handler handler) throws IOException {
        Selector s = start();
        registrations.add(new Object[] {channel, handler});
        s.wakeup();
    }

    /** Makes the loop run a selection now, so channels closed elsewhere are released promptly. */
    void wakeup() {
        Selector s;
        synchronized (this) {
            s = selector;
        }
        if (s != null) s.wakeup();
    }

    /**
     * At JVM shutdown (the agent's shutdown hook): ends the loop thread and waits a little for it.
     * A thread blocked in {@code epoll_wait} is "in native", and HotSpot's exit waits up to 300 ms for
     * such threads; the doorbell thread made every JVM with a shm connection exit that much later than
     * it did without the agent. Connections still open see no more doorbells (the JVM is ending).
     */
    void shutdown(long waitMillis) {
        Thread t;
        synchronized (this) {
            shutDown = true;
            t = thread;
            if (selector != null) selector.wakeup();
        }
        if (t == null || t == Thread.currentThread()) return;
        try {
            t.join(waitMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized Selector start() throws IOException {
        if (shutDown) throw new IOException("the JVM is shutting down");
        if (selector == null) {
            selector = Selector.open();
            thread = new Thread(this::run, "sora-shm-doorbell");
            thread.setDaemon(true);
            thread.start();
        }
        return selector;
    }

    private void run() {
        Selector s;
        synchronized (this) {
            s = selector;
        }
        while (!shutDown) {
            try {
                s.select(dispatch);
                Object[] r;
                while ((r = registrations.poll()) != null) {
                    SocketChannel ch = (SocketChannel) r[0];
                    try {
                        ch.register(s, SelectionKey.OP_READ, r[1]);
                    } catch (ClosedChannelException e) {
                        // Closed before we got to it: the handler learns of it like any EOF.
                        ((Handler) r[1]).onReadable(ch, scratch.clear());
                    }
                }
            } catch (IOException | RuntimeException e) {
                // A selector failure must not kill the only doorbell thread; go on selecting.
                Thread.onSpinWait();
            }
        }
        try {
            s.close();
        } catch (IOException e) {
            // the JVM is ending
        }
    }

    private void dispatch(SelectionKey key) {
        if (!key.isValid()) return;
        Handler h = (Handler) key.attachment();
        boolean keep;
        try {
            keep = h.onReadable((SocketChannel) key.channel(), scratch.clear());
        } catch (RuntimeException e) {
            keep = false;
        }
        if (!keep) key.cancel();
    }
}
