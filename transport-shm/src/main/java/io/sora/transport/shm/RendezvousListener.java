package io.sora.transport.shm;

import java.io.IOException;
import java.net.BindException;
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

        /**
         * The listener's thread failed and ended (not closed): no request will be read any more, and its
         * socket is gone. After the listener released everything; on that thread.
         */
        default void listenerFailed(String why) {
        }

        /** While the handler has work for {@link #idle} that comes due with time: how often, in ms; 0 otherwise. */
        default long sweepMillis() {
            return 0;
        }

        /**
         * Under the listener's lock, at each {@link #catchUp} and {@link #catchUpKept}: announcements and
         * requests made other than by frames (in a kept segment, {@link NextPairing}) are taken here.
         *
         * @param accepting true on an accepting thread ({@link #catchUp}), false on the doorbell thread
         *                  after a client's kick ({@link #catchUpKept()})
         */
        default void catchUpKept(boolean accepting) {
        }

    }

    static final long HELLO_TIMEOUT_MILLIS = 2000;
    /** How long accepting pauses after it failed (out of file descriptors, most likely). */
    static final long ACCEPT_BACKOFF_NANOS = 100_000_000L;

    private final Path path;
    private final ServerSocketChannel server;
    /**
     * The rendezvous socket's descriptor, for a look before an accepting thread's catch-up accepts
     * ({@link #mayHaveClients}); -1 where libsora cannot make descriptor calls (the catch-up then accepts).
     * Valid while {@link #released} is false: the socket is closed only in {@link #release}, under
     * {@link #lock}, which the catch-up holds.
     */
    private final int serverFd;
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
        this.serverFd = io.sora.transport.NativeSockets.fd(server);
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
            thread = io.sora.transport.AgentThreads.daemon(this, "sora-shm-listen-" + port);
            thread.start();
        } else {
            thread = null;
        }
    }

    /**
     * The rendezvous socket's queue of connections not yet accepted (the kernel caps it at
     * {@code net.core.somaxconn}, 4096 by default since Linux 5.4). A client whose rendezvous connect finds
     * the queue full stays on TCP at once (its connect never waits: {@link ShmClient#connectRendezvous}), so
     * the queue must hold a burst of clients connecting at the same moment, as a connection pool does when
     * it fills: with the JDK's default of 50, a client JVM opening 128 connections at once from 128 threads
     * had 23 of them on TCP, 256 at once half of them ("not accepting (Resource temporarily unavailable)";
     * measured 2026-11-29). A queued connection costs the kernel a socket until the listener's thread
     * accepts it, microseconds later. The price: against a listener that accepts nobody (its process
     * stopped, hung) every client waits its pairing wait in the queue before it stays on TCP, where the
     * 51st and later were refused at once; the wait (100 ms by default) bounds each.
     */
    static final int BACKLOG = 4096;

    private static ServerSocketChannel bind(Path path) throws IOException {
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(path);
        ServerSocketChannel ssc = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            try {
                ssc.bind(address, BACKLOG);
            } catch (BindException e) {
                if (ShmDirectory.someoneListens(path)) {
                    throw new IOException("another sora shm listener is live at " + path, e);
                }
                Files.deleteIfExists(path); // stale: left by a JVM that died
                ssc.bind(address, BACKLOG);
            }
            return ssc;
        } catch (IOException | RuntimeException e) {
            ssc.close();
            throw e;
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

    /**
     * Under the lock, from any thread (the doorbell thread, for a client's kick on a kept channel): the
     * handler looks at its kept segments ({@link HelloHandler#catchUpKept}).
     */
    void catchUpKept() {
        synchronized (lock) {
            if (!released) handler.catchUpKept(false);
        }
    }

    @Override
    public void run() {
        String failure = null;
        try {
            while (!closed) {
                boolean hasPartials;
                long pausedFor;
                synchronized (lock) {
                    hasPartials = !partials.isEmpty();
                    pausedFor = acceptPausedUntil == 0 ? 0 : Math.max(1, (acceptPausedUntil - System.nanoTime()) / 1_000_000L);
                }
                long timeout = soonest(soonest(hasPartials ? HELLO_TIMEOUT_MILLIS / 4 : 0, handler.sweepMillis()), pausedFor);
                if (timeout > 0) {
                    selector.select(timeout);
                } else {
                    selector.select(); // idle listener: no timed wake-ups
                }
                synchronized (lock) {
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
            failure = e.toString(); // the listener cannot go on: the binding is told, below
        } catch (Error e) {
            failure = e.toString();
            throw e;
        } finally {
            release();
            // Clients find no listener file now and stay on TCP; the binding must stop counting on this
            // thread too (an accept's catch-up and a client's kick read nothing any more: a kept
            // channel's client would wait its whole pairing wait for an answer)
            if (failure != null && !closed) {
                try {
                    handler.listenerFailed(failure);
                } catch (RuntimeException ignored) {
                    // nothing more to do on a dead listener's thread
                }
            }
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
                // the kept segments first: a client waiting on one gets its answer before this thread
                // makes the system calls of the rendezvous (an accept that finds nobody, most times)
                handler.catchUpKept(true);
                boolean accepted = mayHaveClients() && accept(true);
                int before = partials.size();
                if (before > 0) {
                    for (SelectionKey key : new ArrayList<>(partials)) {
                        if (key.isValid()) read(key);
                    }
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
     * Whether a client may wait in the rendezvous' backlog: one poll(2) of its descriptor, where the JDK's
     * accept that finds nobody (nearly every accepting thread's catch-up: a client without sora announces
     * nothing, and a kept channel's client announces in its segment) runs its locks and bookkeeping first,
     * interpreted in a cold JVM: 10 us of a plain client's accept with -Xint (2026-11-28). True when it
     * cannot tell (no descriptor calls, a failed poll) and while accepting is paused (the accept resumes it).
     * A client's connect to the rendezvous is queued before its ANNOUNCE is written and before its TCP
     * connect, and only holders of {@link #lock} accept: so when an accept returned that TCP connection, the
     * rendezvous connection either waits in the backlog (the listener is readable) or was accepted already
     * (it is among the partial HELLOs the catch-up reads next, or was handed on).
     */
    private boolean mayHaveClients() {
        if (serverFd < 0 || acceptPausedUntil != 0) return true;
        try {
            return io.sora.transport.NativeSockets.awaitReadable(serverFd, 0);
        } catch (IOException e) {
            return true;
        }
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
                cancel(key);
                if (!(m instanceof Wire.Hello hello)) throw new IOException("expected HELLO, got " + m.getClass().getSimpleName());
                if (p.acc.position() != 0) throw new IOException("bytes after HELLO before the OFFER");
                handler.onHello(ch, hello);
                return;
            }
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            // OutOfMemoryError: the JDK's temporary direct buffer for the read, under a small
            // -XX:MaxDirectMemorySize; this client stays on TCP, the listener serves the next (it ended the
            // listener's thread, and every later connection of its server was TCP)
            cancel(key);
            dropped(ch, p);
        }
    }

    private void cancel(SelectionKey key) {
        key.cancel();
        partials.remove(key);
    }

    private void dropped(SocketChannel ch, Partial p) {
        closeQuietly(ch);
        if (p.announced) handler.onWithdrawn(ch);
    }

    private void dropSlowClients() {
        long now = System.nanoTime();
        for (SelectionKey key : new ArrayList<>(partials)) {
            Partial p = (Partial) key.attachment();
            if (now - p.since > HELLO_TIMEOUT_MILLIS * 1_000_000L) {
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
