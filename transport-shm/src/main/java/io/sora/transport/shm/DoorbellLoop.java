package io.sora.transport.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import io.sora.transport.NativeEpoll;
import io.sora.transport.NativeSockets;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The one daemon thread ({@code sora-shm-doorbell}) that reads every shm control channel of the agent
 * (one per agent class loader, so one per JVM at a time): doorbells, COMMIT, and end-of-file (peer
 * closed or died). It blocks without a timeout, so idle connections cost nothing. Started on first
 * use; it runs until the agent detaches ({@link #closeWhenIdle}: then it ends once its last channel is
 * gone, since detached connections keep their fast path) or the JVM exits ({@link #shutdown}).
 *
 * <p>Where sora's native library gives channel descriptors ({@link NativeSockets#descriptorCallsOn}),
 * the loop waits in an epoll set of its own ({@link NativeEpoll}) that the registering, muting and
 * closing threads change themselves; else in a {@link Selector}, whose registrations, cancellations
 * and changes of interest its thread must make, so each wakes it. Measured on connection churn (both
 * ends attached, 6,000 connections one after another): the selector's thread woke about three times
 * per connection and side (the registration, the peer's end, the cancelled key), the epoll set's
 * once (the peer's end). A channel registered here is closed through {@link #close}, which takes it
 * out of the set before closing it: a descriptor number is reused at once, and the set must never
 * name another file under it. {@code -Dsora.doorbell.selector=true} keeps the selector.
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

    /** Whether loops wait in an epoll set of their own (else a Selector); see the class comment. */
    static final boolean NATIVE = Mode.NATIVE;
    private static final DoorbellLoop INSTANCE = new DoorbellLoop();

    /** The mode, readable (for the start-up trace) without making the loop. */
    static final class Mode {
        static final boolean NATIVE = NativeSockets.descriptorCallsOn() && !Boolean.getBoolean("sora.doorbell.selector");

        private Mode() {
        }
    }

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

    /** Whether this loop waits in an epoll set of its own. */
    private final boolean nativeMode;
    /**
     * The epoll mode's set, or null while no thread runs (written under this). Closed only by a loop
     * ending after a detach with no channel watched (a change under a channel's stripe always finds its
     * watch still listed, so never a closed set), never at shutdown (the JVM is ending).
     */
    private volatile NativeEpoll epoll;
    /** The epoll mode's channels: by channel (register, close, mute) and by the id epoll returns. */
    private final ConcurrentHashMap<SocketChannel, Watch> watches = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Watch> byId = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    /** Serialise register, mute and close of one channel (by identity hash): see {@link #close}. */
    private final Object[] stripes = new Object[64];

    /** One channel in the epoll set. */
    private static final class Watch {
        final SocketChannel channel;
        final int fd;
        final long id;
        /** Replaced only by {@link #rebind} (a kept channel's next connection), under the channel's stripe. */
        volatile Handler handler;
        /** In the set (guarded by the channel's stripe). */
        boolean on;

        Watch(SocketChannel channel, int fd, long id, Handler handler) {
            this.channel = channel;
            this.fd = fd;
            this.id = id;
            this.handler = handler;
        }
    }

    DoorbellLoop() { // one per JVM (get()); tests make their own
        this(Mode.NATIVE);
    }

    DoorbellLoop(boolean nativeMode) {
        this.nativeMode = nativeMode;
        for (int i = 0; i < stripes.length; i++) stripes[i] = new Object();
    }

    private Object stripe(SocketChannel ch) {
        return stripes[System.identityHashCode(ch) & (stripes.length - 1)];
    }

    /** Times the epoll loop's thread returned from its wait (written by that thread only; tests). */
    private volatile long turns;

    long turns() {
        return turns;
    }

    /** Whether this loop waits in its own epoll set (tests). */
    boolean isNative() {
        return nativeMode;
    }

    static DoorbellLoop get() {
        return INSTANCE;
    }

    /**
     * Registers a non-blocking channel; the handler runs on the loop thread. Close it through
     * {@link #close} from now on. A channel already closed is not watched.
     */
    void register(SocketChannel channel, Handler handler) throws IOException {
        if (nativeMode) {
            registerNatively(channel, handler);
            return;
        }
        Selector s;
        synchronized (this) { // with start(): a loop ending when idle sees this registration, or is replaced
            s = start();
            registrations.add(new Object[] {channel, handler});
        }
        s.wakeup();
    }

    private void registerNatively(SocketChannel channel, Handler handler) throws IOException {
        synchronized (this) { // with startNatively(): a loop ending when idle sees this registration, or is replaced
            NativeEpoll ep = startNatively();
            synchronized (stripe(channel)) {
                if (watches.containsKey(channel)) return; // watched already (a second ADD would fail with EEXIST)
                int fd = NativeSockets.fd(channel);
                if (fd < 0) return; // closed already: its end was seen, or is its closer's to report
                Watch w = new Watch(channel, fd, ids.incrementAndGet(), handler);
                watches.put(channel, w);
                byId.put(w.id, w);
                int rc = ep.ctl(NativeEpoll.CTL_ADD, fd, NativeEpoll.EPOLLIN, w.id);
                if (rc != 0) {
                    watches.remove(channel);
                    byId.remove(w.id);
                    throw new IOException("cannot watch the control channel: epoll_ctl: " + io.sora.transport.NativeFiles.describe(rc));
                }
                w.on = true;
            }
        }
    }

    /**
     * Closes a channel given to {@link #register} (or not), out of the loop's set first where the loop
     * has one of its own: its descriptor number is free for reuse the moment it is closed.
     */
    void close(SocketChannel channel) {
        if (nativeMode) {
            synchronized (stripe(channel)) {
                Watch w = watches.get(channel);
                if (w != null) unwatch(w);
                closeQuietly(channel);
            }
            return;
        }
        synchronized (stripe(channel)) { // after any whileOpen action on it (see there)
            closeQuietly(channel);
        }
        wakeup(); // the selector releases its key at its next selection
    }

    /**
     * A kept channel's next connection (epoll mode): {@code handler} replaces the watched channel's handler,
     * without a change of the epoll set. A {@link ShmMedium} replaced learns its successor first, so that
     * what a call of it already under way reads reaches the new one. False if the channel is not watched
     * or closed (its end was seen).
     */
    boolean rebind(SocketChannel channel, Handler handler) {
        if (!nativeMode) throw new IllegalStateException("channels are kept only with the epoll loop");
        synchronized (stripe(channel)) {
            Watch w = watches.get(channel);
            if (w == null || !channel.isOpen()) return false;
            if (w.handler instanceof ShmMedium old && handler instanceof ShmMedium next) old.successor = next;
            w.handler = handler;
            return true;
        }
    }

    /**
     * Closes {@code channel} as {@link #close} does, if {@code handler} is still its handler (or it is not
     * watched); false, and nothing done, if another handler replaced it ({@link #rebind}).
     */
    boolean closeIfHandler(SocketChannel channel, Handler handler) {
        synchronized (stripe(channel)) {
            Watch w = watches.get(channel);
            if (w != null && w.handler != handler) return false;
            if (w != null) unwatch(w);
            closeQuietly(channel);
            return true;
        }
    }

    /**
     * Runs {@code action} while {@code channel}, closed only through {@link #close}, stays open: a close
     * waits for it to return. What acts on the channel's descriptor by its number outside the JDK's
     * channel (an application selector's epoll set, {@code ChannelSelection}) must hold this, or a close
     * in between frees the number and the action reaches whatever file reuses it: another epoll entry
     * removed, an application's channel that never wakes its selector again. Returns {@code -1} without
     * running it once the channel is closed.
     */
    int whileOpen(SocketChannel channel, java.util.function.IntSupplier action) {
        synchronized (stripe(channel)) {
            if (!channel.isOpen()) return -1;
            return action.getAsInt();
        }
    }

    /**
     * Takes w out of the set while its channel is still open (the caller holds its stripe, and w is
     * still listed, so the set is open: see {@link #epoll}); then forgets it.
     */
    private void unwatch(Watch w) {
        NativeEpoll ep = epoll;
        if (w.on && ep != null && w.channel.isOpen()) ep.ctl(NativeEpoll.CTL_DEL, w.fd, 0, w.id);
        w.on = false;
        watches.remove(w.channel, w);
        byId.remove(w.id, w);
        // after a detach the loop ends with its last channel: closed here by another thread (a kept
        // channel's end handed on at its close, say), it must wake to see that (it would sleep for ever)
        if (closing && ep != null && watches.isEmpty()) ep.wakeup();
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }

    /**
     * Makes the loop look at its channels now: the selector releases the keys of channels closed
     * elsewhere; the epoll loop forgets channels closed without {@link #close} (the kernel took them out
     * of its set with their last descriptor).
     */
    void wakeup() {
        if (nativeMode) {
            NativeEpoll ep = epoll;
            if (ep != null) ep.wakeup();
            return;
        }
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
            if (epoll != null) epoll.wakeup();
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
            if (epoll != null) epoll.wakeup();
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
        if (nativeMode) {
            // changed here, by the muting thread: the set is the loop's own (no other thread's registration)
            synchronized (stripe(channel)) {
                Watch w = watches.get(channel);
                NativeEpoll ep = epoll;
                if (w == null || !w.on || !channel.isOpen() || ep == null) return;
                ep.ctl(NativeEpoll.CTL_MOD, w.fd, medium.bellMuted() ? MUTED : EPOLLIN, w.id);
            }
            return;
        }
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

    private synchronized NativeEpoll startNatively() throws IOException {
        if (shutDown) throw new IOException("the JVM is shutting down");
        if (epoll == null) {
            NativeEpoll ep = NativeEpoll.open();
            epoll = ep;
            thread = io.sora.transport.AgentThreads.daemon(() -> runNatively(ep), "sora-shm-doorbell");
            thread.start();
        }
        return epoll;
    }

    private void runNatively(NativeEpoll ep) {
        long[] events = new long[2 * 64];
        while (!shutDown) {
            try {
                int n = ep.await(events, -1);
                turns++;
                boolean woken = false;
                for (int i = 0; i < n; i++) {
                    long id = events[2 * i];
                    if (id == 0) {
                        woken = true;
                        continue;
                    }
                    Watch w = byId.get(id);
                    if (w != null) dispatchNatively(w);
                }
                if (woken) forgetClosed();
                if (closing && endNativelyIfIdle()) return; // the set is closed
            } catch (IOException | RuntimeException e) {
                // A failure must not kill the only doorbell thread; go on waiting.
                Thread.onSpinWait();
            }
        }
        // shut down: the set stays open (the JVM is ending; a close racing a change could hit a reused number)
    }

    private void dispatchNatively(Watch w) {
        Handler h = w.handler;
        boolean keep;
        try {
            keep = h.onReadable(w.channel, scratch.clear());
        } catch (RuntimeException e) {
            keep = false;
        }
        if (keep) return;
        // finished (its end, or closed): out of the set, or its end would be reported again and again;
        // unless another handler took the channel meanwhile (rebind), which reads its end itself
        synchronized (stripe(w.channel)) {
            if (watches.get(w.channel) == w && w.handler == h) unwatch(w);
        }
    }

    /** Forgets watches of channels closed without {@link #close} (the kernel dropped them from the set). */
    private void forgetClosed() {
        for (Watch w : watches.values()) {
            if (w.channel.isOpen()) continue;
            synchronized (stripe(w.channel)) {
                if (watches.get(w.channel) == w) {
                    watches.remove(w.channel);
                    byId.remove(w.id);
                    w.on = false; // its descriptor is gone: nothing to take out
                }
            }
        }
    }

    /** After a detach: true (the set closed, the loop forgotten) when no channel is watched. */
    private boolean endNativelyIfIdle() {
        forgetClosed();
        NativeEpoll ep;
        synchronized (this) {
            if (!watches.isEmpty()) return false;
            ep = epoll;
            epoll = null;
            thread = null;
        }
        if (ep != null) ep.close();
        return true;
    }

    private synchronized Selector start() throws IOException {
        if (shutDown) throw new IOException("the JVM is shutting down");
        if (selector == null) {
            Selector s = Selector.open();
            selector = s;
            thread = io.sora.transport.AgentThreads.daemon(() -> run(s), "sora-shm-doorbell");
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
            // a key cancelled by this selectNow's own dispatch (a channel's end read just now) is still
            // in the key set until the next selection: counted, the loop would wait again with nothing
            // left to wake it (the CI's DoorbellLoopDetachTest, 2026-11-27)
            for (SelectionKey k : s.keys()) {
                if (k.isValid()) return false;
            }
            if (!registrations.isEmpty()) return false;
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
