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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;

/**
 * The rendezvous socket of one {@link ShmServerBinding} and its thread ({@code sora-shm-listen-<port>},
 * daemon): accepts Unix-domain connections, reads each HELLO without letting a slow client hold up
 * the others, and hands complete ones to the binding. A client that sends no complete HELLO within
 * {@link #HELLO_TIMEOUT_MILLIS} is dropped.
 *
 * <p>{@link #catchUp} does the same work on the calling thread (an accepting thread), so that every
 * ANNOUNCE a client wrote before its TCP connect is known when that connection's {@code accept()}
 * is decided, without the client waiting for an answer to its ANNOUNCE. All processing of channels
 * runs under one lock; the thread's {@code select} runs outside it.
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

        /**
         * On the listener's thread, outside its lock, after each round of work and after {@link #wakeup}:
         * time for work that should not delay a client (preparing the next offer).
         */
        default void idle() {
        }

        /** While the handler has work for {@link #idle} that comes due with time: how often, in ms; 0 otherwise. */
        default long sweepMillis() {
            return 0;
        }

        /**
         * Under the listener's lock, at each {@link #catchUp}: announcements made other than by an
         * ANNOUNCE frame (in a kept segment) are passed on here, through {@link #announcedKept}.
         */
        default void catchUpKept() {
        }

        /** A channel the listener read from is closed (any reason): whatever was kept with it goes. */
        default void onClosed(SocketChannel channel) {
        }
    }

    static final long HELLO_TIMEOUT_MILLIS = 2000;
    /** How long accepting pauses after it failed (out of file descriptors, most likely). */
    static final long ACCEPT_BACKOFF_NANOS = 100_000_000L;

    private final Path path;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final SelectionKey serverKey;
    private final HelloHandler handler;
    private final Thread thread;
    private volatile boolean closed;
    /** Guards the processing of channels and {@link #partials}; never held while selecting. */
    private final Object lock = new Object();
    /** Keys of accepted channels whose HELLO is not complete yet; guarded by {@link #lock}. */
    private final Set<SelectionKey> partials = new HashSet<>();
    /** The channels are released; guarded by {@link #lock}. */
    private boolean released;
    /** While accepting is paused after a failure: until when ({@code System.nanoTime()}); 0 otherwise. Guarded by {@link #lock}. */
    private long acceptPausedUntil;

    /** Binds {@code path} (replacing a stale socket file of a dead JVM) and starts the thread. */
    RendezvousListener(Path path, int port, HelloHandler handler) throws IOException {
        this(path, port, handler, true);
    }

    /** @param threaded false (tests): no thread; channels are processed only by {@link #catchUp} */
    RendezvousListener(Path path, int port, HelloHandler handler, boolean threaded) throws IOException {
        this.path = path;
        this.handler = handler;
        this.server = bind(path);
        try {
            Files.setPosixFilePermissions(path, ShmDirectory.OWNER_ONLY_FILE);
            server.configureBlocking(false);
            selector = Selector.open();
            serverKey = server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            Files.deleteIfExists(path);
            throw e;
        }
        if (threaded) {
            thread = new Thread(this, "sora-shm-listen-" + port);
            thread.setDaemon(true);
            thread.start();
        } else {
            thread = null;
        }
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

    /**
     * A HELLO being read: bytes so far, when the connection arrived, whether it announced itself. An idle
     * kept channel ({@link #adopt}) waits without a time limit until its client announces or writes.
     */
    private static final class Partial {
        final ByteBuffer acc = ByteBuffer.allocate(Wire.MAX_FRAME);
        long since = System.nanoTime();
        boolean announced;
        boolean idle;
    }

    /** Kept channels whose registration waits for the thread's next turn (their old key not yet gone). */
    private final java.util.ArrayDeque<Object[]> adoptions = new java.util.ArrayDeque<>();
    /** Idle kept channels by channel, registered or waiting to be; guarded by {@link #lock}. */
    private final java.util.Map<SocketChannel, Partial> keptIdle = new java.util.IdentityHashMap<>();

    /**
     * Takes a kept channel back after its connection (see {@link ShmMedium}, "Kept for the next
     * connection"): it waits here for the client's next HELLO, without a time limit. {@code carry}: bytes
     * already read after the client's DONE; {@code announced}: the client's announcement was seen.
     * False if the listener is closed (the caller closes the channel).
     */
    boolean adopt(SocketChannel channel, ByteBuffer carry, java.util.function.BooleanSupplier announced) {
        synchronized (lock) {
            if (released || closed) return false;
            Partial p = new Partial();
            p.announced = announced.getAsBoolean();
            p.idle = !p.announced && !carry.hasRemaining();
            p.acc.put(carry);
            keptIdle.put(channel, p);
            try {
                registerKept(channel, p);
            } catch (java.nio.channels.CancelledKeyException e) {
                // its key of the previous connection is cancelled and not yet gone: at the thread's next turn
                adoptions.add(new Object[] {channel, p});
                selector.wakeup();
                return true;
            } catch (IOException | RuntimeException e) {
                keptIdle.remove(channel);
                return false;
            }
            selector.wakeup(); // its select must see the new key
            return true;
        }
    }

    /**
     * Under the lock: a kept channel registered, and what it holds read; a key its client wrote in the
     * segment meanwhile is taken now ({@link HelloHandler#catchUpKept}).
     */
    private void registerKept(SocketChannel ch, Partial p) throws IOException {
        SelectionKey key = ch.register(selector, SelectionKey.OP_READ, p);
        partials.add(key);
        read(key);
        if (key.isValid()) handler.catchUpKept();
    }

    /**
     * Under the lock (from {@link HelloHandler#catchUpKept}): the kept channel, idle here, is taken for its
     * client's next connection, keyed in its segment. False if it is not registered here (its adoption
     * is under way, and calls the handler again once it is) or was taken already.
     */
    boolean takeKept(SocketChannel channel) {
        Partial p = keptIdle.get(channel);
        if (p == null) return false;
        SelectionKey key = channel.keyFor(selector);
        if (key == null || !key.isValid() || key.attachment() != p) return false;
        cancel(key);
        return true;
    }

    /**
     * Under the lock, on the listener's thread after a select: registers the kept channels {@link #adopt}
     * could not. A channel whose previous key was cancelled after that select began its deregistration
     * (by an accepting thread's catch-up, or an adoption that read its HELLO at once) still has that key:
     * it waits for the next turn, which comes at once (a wake-up). Until 2026-11-25 it was dropped, and
     * its client, whose HELLO was unread, got "Connection reset" and stayed on TCP (ChurnLeakIT in the
     * CI, about one run in 50 under load: one connection of 2,000).
     */
    private void registerAdoptions() {
        java.util.List<Object[]> later = null;
        Object[] a;
        while ((a = adoptions.poll()) != null) {
            SocketChannel ch = (SocketChannel) a[0];
            Partial p = (Partial) a[1];
            try {
                registerKept(ch, p);
            } catch (java.nio.channels.CancelledKeyException e) {
                if (later == null) later = new java.util.ArrayList<>(1);
                later.add(a);
            } catch (IOException | RuntimeException e) {
                dropped(ch, p); // out of keptIdle too
            }
        }
        if (later != null) {
            adoptions.addAll(later);
            selector.wakeup();
        }
    }

    /** Registers the waiting adoptions now, without a select first, as the thread does after one (tests). */
    void registerAdoptionsNow() {
        synchronized (lock) {
            registerAdoptions();
        }
    }

    /** One turn of the thread's loop without waiting: a select, then the adoptions (tests). */
    void turn() throws IOException {
        selector.selectNow();
        synchronized (lock) {
            registerAdoptions();
        }
    }

    /**
     * Under the lock (from {@link HelloHandler#catchUpKept}): the client announced its next connection
     * on a kept channel. True if the channel is idle here (its Partial now counts as announced).
     */
    boolean announcedKept(SocketChannel channel) {
        Partial p = keptIdle.get(channel);
        if (p == null) return false;
        if (!p.announced) {
            p.announced = true;
            p.idle = false;
            p.since = System.nanoTime();
        }
        return true;
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                boolean hasPartials;
                long pausedFor;
                synchronized (lock) {
                    hasPartials = false; // idle kept channels have no time limit: no timed wake-ups for them
                    for (SelectionKey k : partials) {
                        if (!((Partial) k.attachment()).idle) {
                            hasPartials = true;
                            break;
                        }
                    }
                    pausedFor = acceptPausedUntil == 0 ? 0 : Math.max(1, (acceptPausedUntil - System.nanoTime()) / 1_000_000L);
                }
                long timeout = soonest(soonest(hasPartials ? HELLO_TIMEOUT_MILLIS / 4 : 0, handler.sweepMillis()), pausedFor);
                if (timeout > 0) {
                    selector.select(timeout);
                } else {
                    selector.select(); // idle listener: no timed wake-ups
                }
                synchronized (lock) {
                    if (!adoptions.isEmpty()) registerAdoptions();
                    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                    while (it.hasNext()) {
                        SelectionKey key = it.next();
                        it.remove();
                        if (!key.isValid()) continue;
                        if (key.isAcceptable()) accept();
                        else if (key.isReadable()) read(key);
                    }
                    if (acceptPausedUntil != 0) accept(); // resumes once the pause is over
                    if (!partials.isEmpty()) dropSlowClients();
                }
                if (!closed) handler.idle();
            }
        } catch (IOException | RuntimeException e) {
            // The listener cannot go on; clients find no answer and stay on TCP.
        } finally {
            release();
        }
    }

    /** The sooner of two timed wake-ups in ms, where 0 means none. */
    private static long soonest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : Math.min(a, b);
    }

    /**
     * On the calling thread: accepts the rendezvous connections waiting in the backlog and reads what
     * every channel without a complete HELLO has received, so that each ANNOUNCE and HELLO written
     * before now has reached the handler on return. A client writes its ANNOUNCE before its TCP
     * connect, so after an {@code accept()} returned its connection, this makes the announcement known
     * (docs/shm.md, "Why ANNOUNCE").
     */
    boolean catchUp() {
        synchronized (lock) {
            if (released) return true; // closed: nothing will be read any more, and the table knows
            try {
                boolean accepted = accept(true);
                // a kept channel taken here leaves a cancelled key, which its next adoption deals with: the
                // thread need not wake for it (so the count is taken after)
                handler.catchUpKept();
                int before = partials.size();
                for (SelectionKey key : new ArrayList<>(partials)) {
                    // an idle kept channel has nothing to read until its client announced (in its segment)
                    if (key.isValid() && !((Partial) key.attachment()).idle) read(key);
                }
                // The thread's select must see new channels, and must deregister the keys cancelled
                // here: a cancelled key keeps its channel's descriptor open (the JDK closes it at the
                // deregistration), and an idle listener selects again only at its next connection
                if (accepted || partials.size() != before) selector.wakeup();
                // accepting paused: clients may wait unread in the backlog
                return acceptPausedUntil == 0;
            } catch (IOException | RuntimeException e) {
                return false; // the thread meets the same failure and ends the listener
            }
        }
    }

    /**
     * Accepts the waiting connections and reads each at once; true if any was registered. A failing
     * accept (the process out of file descriptors, most likely) pauses accepting for
     * {@link #ACCEPT_BACKOFF_NANOS} instead of ending the listener (it did, and no later connection to
     * that server socket paired): meanwhile clients wait in the backlog until their pairing wait runs out
     * and stay on TCP, as their connections' accepts decide, since no announcement of theirs was read.
     */
    private boolean accept() throws IOException {
        return accept(false);
    }

    /**
     * @param evenIfPaused try even while accepting is paused (an accepting thread's catch-up): the pause
     *                     keeps the listener's thread from turning on a failing accept, and must not make
     *                     a connection accepted just after descriptors came back TCP. Until 2026-11-24 it
     *                     did (the CI's {@code DescriptorLimitIT} once: "shm shm tcp", the third
     *                     connection accepted within the 100 ms pause that a failure during the
     *                     exhaustion had left). A successful accept ends the pause.
     */
    private boolean accept(boolean evenIfPaused) throws IOException {
        if (acceptPausedUntil != 0) {
            if (!evenIfPaused && System.nanoTime() - acceptPausedUntil < 0) return false;
        }
        boolean any = false;
        for (;;) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                if (closed || !server.isOpen()) throw e;
                long until = System.nanoTime() + ACCEPT_BACKOFF_NANOS;
                acceptPausedUntil = until == 0 ? 1 : until;
                serverKey.interestOps(0);
                return any;
            }
            if (acceptPausedUntil != 0 && (ch != null || System.nanoTime() - acceptPausedUntil >= 0)) {
                // accepting works again (or the pause is over): the thread's select watches the socket again
                acceptPausedUntil = 0;
                serverKey.interestOps(SelectionKey.OP_ACCEPT);
            }
            if (ch == null) return any;
            SelectionKey key;
            try {
                ch.configureBlocking(false);
                key = ch.register(selector, SelectionKey.OP_READ, new Partial());
            } catch (IOException | RuntimeException e) {
                closeQuietly(ch); // this client finds the rendezvous closed and stays on TCP
                continue;
            }
            partials.add(key);
            any = true;
            // An ANNOUNCE is written before the client's TCP connect: answer it now, not a select later.
            read(key);
        }
    }

    private void read(SelectionKey key) {
        SocketChannel ch = (SocketChannel) key.channel();
        Partial p = (Partial) key.attachment();
        try {
            for (;;) {
                int before = p.acc.position();
                if (ch.read(p.acc) < 0) throw new IOException("EOF before HELLO");
                if (p.idle && p.acc.position() > before) {
                    p.idle = false;
                    p.since = System.nanoTime();
                }
                Wire.Message m = Wire.tryDecode(p.acc);
                if (m == null) {
                    if (!p.acc.hasRemaining()) throw new IOException("HELLO too long");
                    return;
                }
                if (m instanceof Wire.Announce && keptIdle.get(ch) == p) {
                    // on a kept channel, the client's kick: its key is in the segment, and no accept took it
                    handler.catchUpKept();
                    if (!key.isValid()) return; // taken
                    continue;
                }
                if (m instanceof Wire.Announce && !p.announced) {
                    p.announced = true;
                    handler.onAnnounce(ch);
                    continue; // a HELLO may follow in the same read
                }
                cancel(key);
                if (!(m instanceof Wire.Hello hello)) throw new IOException("expected HELLO, got " + m.getClass().getSimpleName());
                if (p.acc.position() != 0) throw new IOException("bytes after HELLO before the OFFER");
                handler.onHello(ch, hello);
                return;
            }
        } catch (IOException | RuntimeException e) {
            cancel(key);
            dropped(ch, p);
        }
    }

    private void cancel(SelectionKey key) {
        key.cancel();
        partials.remove(key);
        keptIdle.remove((SocketChannel) key.channel());
    }

    private void dropped(SocketChannel ch, Partial p) {
        keptIdle.remove(ch);
        closeQuietly(ch);
        handler.onClosed(ch);
        if (p.announced) handler.onWithdrawn(ch);
    }

    private void dropSlowClients() {
        long now = System.nanoTime();
        for (SelectionKey key : new ArrayList<>(partials)) {
            Partial p = (Partial) key.attachment();
            if (!p.idle && now - p.since > HELLO_TIMEOUT_MILLIS * 1_000_000L) {
                cancel(key);
                dropped((SocketChannel) key.channel(), p);
            }
        }
    }

    private void release() {
        synchronized (lock) {
            released = true;
            // Cancelled keys belong to channels already handed to the binding: leave those open.
            for (SelectionKey key : selector.keys()) {
                if (!key.isValid()) continue;
                if (key.attachment() instanceof Partial p) dropped((SocketChannel) key.channel(), p);
                else closeQuietly(key.channel());
            }
            partials.clear();
            Object[] a;
            while ((a = adoptions.poll()) != null) dropped((SocketChannel) a[0], (Partial) a[1]);
            keptIdle.clear();
            closeQuietly(selector);
            closeQuietly(server);
        }
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

    /** As a failing accept does: accepting paused for {@code nanos} (tests). */
    void pauseAccepting(long nanos) {
        synchronized (lock) {
            long until = System.nanoTime() + nanos;
            acceptPausedUntil = until == 0 ? 1 : until;
            serverKey.interestOps(0);
        }
    }

    /** Has the thread call {@link HelloHandler#idle} soon (from any thread). */
    void wakeup() {
        selector.wakeup();
    }

    /** Stops the thread; it closes the socket and removes the socket file. Idempotent. */
    void close() {
        closed = true;
        if (thread == null) release();
        else selector.wakeup();
    }

    /** For tests and orderly shutdown: waits (bounded) for the thread to finish. */
    void join(long millis) throws InterruptedException {
        if (thread != null) thread.join(millis);
    }
}
