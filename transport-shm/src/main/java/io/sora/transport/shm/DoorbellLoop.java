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
 * The one daemon thread ({@code sora-shm-doorbell}) that reads every shm control channel of the agent
 * (one per agent class loader, so one per JVM at a time): doorbells, COMMIT, and end-of-file (peer
 * closed or died). It blocks in {@link Selector#select} without a timeout, so idle connections cost
 * nothing. Started on first use; it runs until the agent detaches ({@link #closeWhenIdle}: then it ends
 * once its last channel is gone, since detached connections keep their fast path) or the JVM exits
 * ({@link #shutdown}).
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
    private final Queue<Object[]> mutes = new ConcurrentLinkedQueue<>();
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(256);
    private final Consumer<SelectionKey> dispatch = this::dispatch;
    private Selector selector; // guarded by this; null while no thread runs
    private Thread thread; // guarded by this
    /** Set at JVM shutdown: the loop ends and no new one starts. */
    private volatile boolean shutDown;
    /** Set at detach: the loop ends when no channel is registered (a later registration starts it again). */
    private volatile boolean closing;

    DoorbellLoop() { // one per JVM (get()); tests make their own
    }

    static DoorbellLoop get() {
        return INSTANCE;
    }

    /** Registers a non-blocking channel; the handler runs on the loop thread. */
    void register(SocketChannel channel, Handler handler) throws IOException {
        Selector s;
        synchronized (this) { // with start(): a loop ending when idle sees this registration, or is replaced
            s = start();
            registrations.add(new Object[] {channel, handler});
        }
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

    /**
     * Detach: the loop thread ends as soon as no channel is registered (at once when none is), and
     * closes its selector; the connections still open keep their doorbells until they close. A channel
     * registered later (a pairing that raced the detach) starts a loop again, which ends the same way.
     */
    void closeWhenIdle() {
        synchronized (this) {
            closing = true;
            if (selector != null) selector.wakeup();
        }
    }

    /** epoll's readable event: the loop's full watch of a channel. */
    static final int EPOLLIN = 0x001;
    /**
     * The muted watch: no event asked for. epoll still reports a hang-up (EPOLLHUP: the peer closed or
     * died, both directions shut) and errors, which the JDK's selector reports as readable, so the
     * handler reads the end as before. Not EPOLLRDHUP: a half-close alone would be reported without
     * anything the JDK translates, and the level-triggered loop would spin on it.
     */
    static final int MUTED = 0;

    /**
     * Brings the loop's watch of {@code channel} to what its medium wants now ({@link ShmMedium#bellMuted}):
     * muted, only the peer's hang-up wakes the loop ({@link #MUTED}: a selector reads the bells);
     * otherwise any byte does. The state is read when applied, so requests applied late or out of order
     * still leave the last one's state. Applied by the
     * loop's thread (woken for it), which alone registers and deregisters its channels, so the
     * descriptor changed is always this channel's.
     */
    void syncMute(SocketChannel channel, ShmMedium medium) {
        Selector s;
        synchronized (this) {
            s = selector;
            if (s == null) return;
            mutes.add(new Object[] {channel, medium, 0});
        }
        s.wakeup();
    }

    private void applyMutes(Selector s) {
        java.util.List<Object[]> again = null;
        Object[] m;
        while ((m = mutes.poll()) != null) {
            SocketChannel ch = (SocketChannel) m[0];
            ShmMedium medium = (ShmMedium) m[1];
            io.sora.transport.RingMedium.BellControl control = medium.bellControl();
            SelectionKey k = ch.keyFor(s);
            if (control == null || k == null || !k.isValid() || !ch.isOpen()) continue;
            int rc;
            try {
                rc = control.modify(s, ch, medium.bellMuted() ? MUTED : EPOLLIN);
            } catch (RuntimeException e) {
                continue; // left as it was: both threads read the bells
            }
            // a channel registered in this same turn reaches epoll only at the next select (the JDK adds
            // it then): try again after it, a few times
            if (rc == ENOENT && (int) m[2] < 3) {
                if (again == null) again = new java.util.ArrayList<>(1);
                again.add(new Object[] {m[0], m[1], (int) m[2] + 1});
            }
        }
        if (again != null) {
            mutes.addAll(again);
            s.wakeup();
        }
    }

    private static final int ENOENT = 2;

    /** The loop's selector, or null while no loop runs. */
    synchronized Selector selector() {
        return selector;
    }

    /** The loop's thread, or null while none runs (tests). */
    synchronized Thread thread() {
        return thread;
    }

    private synchronized Selector start() throws IOException {
        if (shutDown) throw new IOException("the JVM is shutting down");
        if (selector == null) {
            Selector s = Selector.open();
            selector = s;
            thread = new Thread(() -> run(s), "sora-shm-doorbell");
            thread.setDaemon(true);
            thread.start();
        }
        return selector;
    }

    private void run(Selector s) {
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
                applyMutes(s);
                if (closing && endIfIdle(s)) break;
            } catch (IOException | RuntimeException e) {
                // A selector failure must not kill the only doorbell thread; go on selecting.
                Thread.onSpinWait();
            }
        }
        try {
            s.close();
        } catch (IOException e) {
            // the JVM is ending, or the loop is
        }
    }

    /** After a detach: true (and the loop forgotten) when no channel is registered or waiting to be. */
    private boolean endIfIdle(Selector s) throws IOException {
        s.selectNow(dispatch); // deregisters the keys cancelled since the last selection
        synchronized (this) {
            if (!s.keys().isEmpty() || !registrations.isEmpty()) return false;
            selector = null;
            thread = null;
            return true;
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
