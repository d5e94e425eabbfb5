package io.sora.agent;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * The agent's start-up work off the application's threads, in one background thread: probing the
 * fast paths the rules use, then warming up the shm path so that the application's first pairing and
 * first messages do not pay for it cold.
 *
 * <ol>
 *   <li>the data path, in process ({@code DataPathWarmup}): round trips of a few sizes, then some with
 *       the echo on a second thread so the waiting code is run and profiled too;</li>
 *   <li>one throw-away pairing over loopback: class loading, linking and first-time initialisation of
 *       selectors, secure random, mapped buffers (cold, 80 to 100 ms here, about the whole default
 *       pairing wait);</li>
 *   <li>in a JVM of channels, the compilations all this queued: it returns once the JIT compiler
 *       threads have been idle for a few polls ({@link CompilerActivity}).</li>
 * </ol>
 *
 * <p>A JVM's first pairing waits for all this (at most 300 ms by default, 1,000 ms with one CPU,
 * {@code -Dsora.warmup.wait=MS}; 0: never): the client before it announces itself, the server after
 * pairing. Measured on this project's 2-CPU machine, cold JVMs, the JSOR sample (1,000 round trips
 * of 4 KiB): with the data path compiled while the application's first round trips ran, shm was
 * slower than TCP (0.65x unpinned, 0.35x with both JVMs on one CPU); waiting for the warm-up and its
 * compilations, faster (docs/benchmarks/field.md). The price is the first connection's set-up, by
 * what remains of the warm-up when the application first connects.
 *
 * <p>It runs on its own transport instance with tracing off (the trace shows only the application's
 * connections) and marks its thread so the agent's socket advice ignores its sockets. Failures are
 * ignored: a warm-up that fails costs the application nothing.
 */
final class PathWarmup {
    /**
     * Round trips through the in-process data path: enough for the stream and medium methods to
     * pass the JIT's thresholds (C1 at a few hundred calls, C2 at some thousands: with 3,000 the
     * C2 compilations of the stream methods came later, during the application's round trips).
     *
     * <p>Fewer make a short-lived JVM cheaper and a longer-lived one slower, measured 2026-11-24 (2 CPUs,
     * unpinned, cold JVMs, alternating runs): with 500 the JSOR sample pair (1,000 round trips) took 0.80 s
     * instead of 1.04 s (TCP: 0.33 s) and its round trips stayed about twice as fast as TCP's, but H2's
     * point queries through the agent (2,000 untimed, then 10,000 timed) were 1.9x faster than TCP
     * instead of 2.1x, and the 4 KiB ping-pong's 20,000 round trips 20 % slower when both JVMs shared a
     * CPU: C2 compiled the stream methods during the application's queries instead of before them.
     */
    static final int DATA_PATH_ROUNDS = Integer.getInteger("sora.warmup.rounds", 6000);

    /** The agent's channels (set when the bridge delegate is made): the channel warm-up pairs two through it. */
    private static volatile Channels channels;

    /**
     * Round trips of the channel warm-up ({@link #warmChannels}): a selector's poll, arming and report,
     * and the paired channel's reads and writes, past the JIT's thresholds (C1 at a few hundred calls;
     * most of these methods are called several times per round trip).
     */
    static final int CHANNEL_ROUNDS = Integer.getInteger("sora.warmup.channelRounds", 3000);

    /** The warm-up's listener while it runs, so that a JVM exiting meanwhile removes its rendezvous file. */
    private static volatile ServerBinding running;

    /** Counted down when the warm-up is over (or was never going to run). */
    private static final java.util.concurrent.CountDownLatch DATA_PATH_DONE = new java.util.concurrent.CountDownLatch(1);
    /** The work {@link #begin} starts; null until the agent prepared it (and when no shm rule exists). */
    private static volatile Runnable pending;
    private static final java.util.concurrent.atomic.AtomicBoolean BEGUN = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * Set when the application binds or connects a socket channel that a rule may concern ({@link #channelsInUse}),
     * before that decision begins the warm-up: the warm-up then runs the channels' entry points too.
     */
    private static volatile boolean channelsInUse;
    /**
     * 300 ms; 1,000 ms in a JVM that has one CPU (a container limited to one, a process pinned to one):
     * there the warm-up and the compilations it queued can run only while the application waits, and
     * whatever is left of them after the wait shares that CPU with the application's first messages.
     * Measured 2026-11-24 (the JSOR sample from cold JVMs, both pinned to one CPU, `FieldBench --rows
     * sample-cold --placements same`, 4 pairs each): 131-170 us a round trip with 300 ms (TCP 80-100 us),
     * 12.5-22 us with 1,000 ms, and each whole run no longer (1.9-2.1 s against 2.2-2.3 s). With two CPUs
     * the longer wait did not help the same sample (unpinned: 12-112 us against 30-53 us, 6 pairs each).
     */
    static final long DEFAULT_WAIT_MILLIS = Runtime.getRuntime().availableProcessors() <= 1 ? 1000 : 300;
    /**
     * How long a JVM's first pairing may wait for the warm-up (which began at the first sign of it): a data
     * path still cold would cost the application's first round trips milliseconds each, and a
     * warm-up running beside them competes for their CPU. Also the warm-up's own bound.
     */
    static final long DATA_PATH_WAIT_MILLIS = Math.max(0, Long.getLong("sora.warmup.wait", DEFAULT_WAIT_MILLIS));
    /** The JIT counts as done with the warm-up's compilations when idle at this many polls in a row. */
    private static final int QUIET_POLLS = 4;
    private static final long QUIET_POLL_MILLIS = 5;

    private PathWarmup() {
    }

    /**
     * Returns once the warm-up is over (or never began), or at the latest {@link #DATA_PATH_WAIT_MILLIS}
     * after the first pairing began to wait for it: the wait is the JVM's, not each pairing's.
     */
    static void awaitDataPath() {
        if (DATA_PATH_DONE.getCount() == 0 || BridgeDelegate.INTERNAL.get() != null || DATA_PATH_WAIT_MILLIS == 0
                || !BEGUN.get()) return;
        WAIT.await();
    }

    private static final SharedWait WAIT = new SharedWait(DATA_PATH_WAIT_MILLIS * 1_000_000L, System::nanoTime, nanos -> {
        try {
            DATA_PATH_DONE.await(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    });

    /**
     * A wait with one deadline for all who wait: {@code budget} after the first call, whoever calls.
     * Each pairing used to wait up to the whole budget: while a warm-up ran long (a busy machine, here
     * beside a build: 1-2 s), every connection a JVM made in that time waited 300 ms, one after another
     * (three sequential connections of a small client took 0.73 s, 0.30 s and 0.31 s; a pool opening ten
     * connections at start would wait three seconds).
     */
    static final class SharedWait {
        private final long budget;
        private final java.util.function.LongSupplier clock;
        private final java.util.function.LongConsumer wait;
        /** 0 until the first call; then when every wait ends ({@code clock} time). */
        private final java.util.concurrent.atomic.AtomicLong deadline = new java.util.concurrent.atomic.AtomicLong();

        /** @param wait waits at most the nanoseconds it is given, returning early when what it waits for is done */
        SharedWait(long budgetNanos, java.util.function.LongSupplier clock, java.util.function.LongConsumer wait) {
            this.budget = budgetNanos;
            this.clock = clock;
            this.wait = wait;
        }

        void await() {
            long now = clock.getAsLong();
            long mine = now + budget;
            deadline.compareAndSet(0, mine == 0 ? 1 : mine); // the first caller's deadline stands
            long left = deadline.get() - now;
            if (left > 0) wait.accept(left);
        }
    }

    /**
     * From the shutdown hook and at detach: a warm-up cut short leaves nothing behind (its thread ends
     * soon after, its pairing failing), and one not begun yet never begins.
     */
    static void abort() {
        aborted = true;
        pending = null;
        ShmTransport t = warming;
        if (t != null) t.abortWarmUp(); // the data path's threads leave their waits at once
        ServerBinding b = running;
        if (b != null) {
            b.close();
        }
        closeRunningEnds();
    }

    /**
     * Set by {@link #abort}: the warm-up's next stage does not begin. A stage cut short leaves no thread of
     * it asleep in native code (in the futex, or in a ring's wait): HotSpot's exit waits up to 300 ms for
     * such a thread, and a program exiting while the warm-up ran took that much longer (2026-11-28).
     */
    private static volatile boolean aborted;
    /** The warm-up's transport while it runs: {@link #abort} stops its data path warm-up. */
    private static volatile ShmTransport warming;
    /** The paired ends of the channel warm-up while it runs: {@link #abort} closes them, waking its echo thread. */
    private static volatile FastConnection[] runningEnds;

    /** Sets the ends {@link #abort} closes; closes them at once if the abort came first. */
    private static void runningEnds(FastConnection[] ends) {
        runningEnds = ends;
        if (aborted) closeRunningEnds();
    }

    private static void closeRunningEnds() {
        FastConnection[] ends = runningEnds;
        if (ends == null) return;
        for (FastConnection c : ends) {
            try {
                c.close();
            } catch (IOException | RuntimeException e) {
                // the warm-up's own connection: nothing to save
            }
        }
    }

    /**
     * At agent start: records the work, starts nothing. It begins at the first sign that a shm
     * connection may follow ({@link #begin}: a server socket bound where a shm accept rule may match,
     * a connect matching a shm rule), so that rules matching nothing cost nothing (on one CPU the
     * warm-up beside an application that never pairs slowed it down by tens of per cent).
     *
     * @param dataPath whether a shm rule exists: only then can the warm-up ever begin
     * @param first    start-up work kept off the application's main thread (probing the fast paths):
     *                 runs first in the warm-up's thread, also when the warm-up itself is disabled
     */
    static void prepare(boolean dataPath, Runnable first) {
        if (!dataPath) {
            DATA_PATH_DONE.countDown();
            return;
        }
        pending = first;
    }

    /** Set when the application's first pairing begins ({@link #applicationPairing}): the channel warm-up ends. */
    private static volatile boolean applicationPairing;

    /**
     * The application is pairing a connection now: the channel warm-up stops at its next round trip
     * (what it compiled so far is kept). It runs beside the application's start, and on one CPU a
     * warm-up still driving its channels kept a selector server's listener from answering within a
     * non-blocking accept's 20 ms (the {@code nio} field row with both JVMs on one CPU: a connection
     * fell back to TCP).
     */
    static void applicationPairing() {
        if (!applicationPairing) applicationPairing = true;
    }

    static void channels(Channels c) {
        channels = c;
    }

    /**
     * The application uses socket channels (Channels, before the decision that may {@link #begin} the
     * warm-up): a selector server's first messages otherwise ran the channels' entry points of the ring
     * streams interpreted, and deoptimised the stream methods the warm-up had compiled (a buffer class
     * their profile had not seen), recompiling them on the application's time. Streams-only programs
     * do not pay for that part of the warm-up.
     */
    static void channelsInUse() {
        if (!channelsInUse) channelsInUse = true;
    }

    /** Starts the prepared warm-up in its own thread, the first time; any later call does nothing. */
    static void begin() {
        Runnable first = pending;
        if (first == null || !BEGUN.compareAndSet(false, true)) return;
        pending = null;
        boolean disabled = Boolean.getBoolean("sora.warmup.disabled");
        if (disabled) DATA_PATH_DONE.countDown();
        Thread t = new Thread(() -> {
            try {
                try {
                    first.run();
                } catch (RuntimeException | LinkageError | OutOfMemoryError e) {
                    // the first connection that needs a fast path probes it again, and reports
                }
                if (!disabled) run();
            } finally {
                DATA_PATH_DONE.countDown(); // whatever ended the thread: no pairing waits for it
            }
        }, "sora-warmup");
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        try {
            t.start();
        } catch (OutOfMemoryError e) {
            // no thread could be made: no warm-up, and no pairing waits for one
            DATA_PATH_DONE.countDown();
        }
    }

    private static void run() {
        BridgeDelegate.INTERNAL.set(Boolean.TRUE);
        long t0 = System.nanoTime();
        try {
            ShmSettings fromProperties = ShmSettings.fromSystemProperties();
            // keeps no channel: its listener closes at the end, and a kept channel would outlive it
            ShmTransport shm = new ShmTransport(new ShmSettings(fromProperties.directory(),
                    fromProperties.spinIterations(), fromProperties.futex(), false), Tracer.OFF);
            warming = shm;
            if (aborted) shm.abortWarmUp(); // the abort may have looked before the transport was there
            if (!shm.availability().isAvailable()) return;
            // the data path: its var handles linked and its methods compiled before the application's
            // first messages (cold, the first round trips took ~2.6 ms each here), with the
            // application's hooks class (an unconnected socket of this thread, which the agent ignores)
            boolean channelJvm = channelsInUse;
            shm.warmDataPath(DATA_PATH_ROUNDS, PairedSocket.hooks(new Socket()), channelJvm);
            long t1 = System.nanoTime();
            if (aborted) return;
            shm.removeLeftovers();
            if (aborted) return;
            pairOnce(shm);
            long tc = System.nanoTime();
            Channels ch = channels;
            if (aborted) return;
            String channelWarmup = channelsInUse && ch != null && CHANNEL_ROUNDS > 0 ? warmChannels(shm, ch) : "not used";
            long t2 = System.nanoTime();
            // then, in a JVM of channels, let the compilations all this queued finish: a JIT compiling
            // sora's data path while the application's first round trips run takes their CPU. A JVM of
            // streams does not wait: measured 2026-11-24 (2 CPUs, unpinned, cold JVMs), the wait cost
            // 35-100 ms of each JVM's first connect, and without it the JSOR sample pair took 0.92x the
            // time, with its round trips, the 4 KiB ping-pong's and H2's point queries as fast as with it
            // (within the spread of alternating runs: 8 of the pair, 10 of the ping-pong, 6 of H2): the
            // compilations still queued finish on the compiler threads beside the application's first
            // messages, as they did beside the waiting connect
            boolean quiet = !channelJvm || CompilerActivity.awaitQuiet(t0 + DATA_PATH_WAIT_MILLIS * 1_000_000L, QUIET_POLLS, QUIET_POLL_MILLIS);
            if (StartupTimer.ON) {
                System.err.println("[sora] start-up, background warm-up: data path " + StartupTimer.millis(t1 - t0)
                        + " ms (words through " + (io.sora.transport.MemoryAccess.FAST ? "Unsafe" : "VarHandles") + "), pairing " + StartupTimer.millis(tc - t1) + " ms, channels " + StartupTimer.millis(t2 - tc)
                        + " ms (" + channelWarmup + "), waiting for the JIT compiler "
                        + StartupTimer.millis(System.nanoTime() - t2) + " ms (" + (!channelJvm ? "not waited for in a JVM of streams"
                        : quiet ? "it went quiet" : "still busy") + ")");
            }
        } catch (RuntimeException | LinkageError | OutOfMemoryError e) {
            // a warm-up only (OutOfMemoryError: a small -XX:MaxDirectMemorySize, say; the application's own
            // connections meet it again, and say so, if it lasts)
        } finally {
            warming = null;
            DATA_PATH_DONE.countDown();
            BridgeDelegate.INTERNAL.remove();
        }
    }

    /**
     * In a JVM that uses socket channels: one throw-away pair of loopback channels, paired on shm and
     * registered as the application's are ({@link Channels#warmUpPair}), then {@link #CHANNEL_ROUNDS}
     * round trips between a non-blocking end in a selector (this thread: write, select, read until
     * empty) and a blocking end on a second thread (read, write back), heap and direct buffers. The
     * selection code (poll, arming, the report of ready keys) and the paired channel's reads and writes
     * are then compiled before the application's first messages (measured on the {@code nio} field row's
     * server: they were compiled during its run, on one of the two CPUs it needed). The channels are
     * the warm-up thread's (the agent's advice ignores their bind, connect and accept): nothing of them is
     * recorded, traced or counted.
     */
    private static String warmChannels(ShmTransport shm, Channels registry) {
        if (applicationPairing) return "skipped: the application began pairing";
        PairingOptions options = new PairingOptions(1 << 16, 1 << 16, Duration.ofSeconds(5));
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            ServerBinding binding = shm.listen((InetSocketAddress) server.getLocalAddress(),
                    key -> new AcceptPolicy.Allow(options));
            running = binding;
            try (binding;
                 SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept();
                 // and one left on TCP (this thread's connections are the agent's to ignore): see selectorRoundTrips
                 SocketChannel plainClient = SocketChannel.open(server.getLocalAddress());
                 SocketChannel plainAccepted = server.accept()) {
                FastConnection[] ends = pair(shm, binding, options, client.socket(), accepted.socket());
                if (ends == null) return "not paired";
                if (!(ends[0] instanceof RingConnection a && ends[1] instanceof RingConnection b)) {
                    ends[0].close();
                    ends[1].close();
                    return "not paired";
                }
                runningEnds(ends);
                try {
                    if (!registry.warmUpPair(client, a) || !registry.warmUpPair(accepted, b)) return "channels not served";
                    int made = selectorRoundTrips(accepted, client, a, b, plainAccepted, plainClient, CHANNEL_ROUNDS);
                    return made + " round trips" + (made < CHANNEL_ROUNDS ? ", stopped: the application began pairing" : "");
                } finally {
                    runningEnds = null;
                    registry.warmUpUnpair(client);
                    registry.warmUpUnpair(accepted);
                    a.close();
                    b.close();
                }
            }
        } catch (IOException | RuntimeException e) {
            return "failed: " + e; // a warm-up only
        } finally {
            running = null;
        }
    }

    /**
     * @param echoRing the blocking end's connection: closed to end the echo's read at once when the
     *                 round trips stop early (closing the channel would not: the warm-up's pair is not
     *                 the recorder's, so its channel's close leaves the ring open)
     * @param selectingRing the selecting end's connection: every fourth round waits for the echo's bytes in
     *                      it before the select, so that the select's profile has seen a paired key ready
     *                      as the select begins (an application's select finds it so whenever the peer
     *                      answered first); measured 2026-11-28 (-XX:+LogCompilation, FieldNioServer and a
     *                      blocking client): with a warm-up whose selects never began ready, C2 compiled
     *                      that branch of {@code ChannelSelection.selecting} as a trap, and the server's
     *                      first such select threw the compiled method away during the application's run
     * @param plain     a connection left on TCP, its end registered in the same selector (and alone in a
     *                  second one): every eighth round it carries a byte, and its key's interest changes in
     *                  the second selector, so that sora's channel and selector hooks have also seen a channel
     *                  and a selector that are not paired; measured 2026-11-28 (-XX:+LogCompilation, the JDK's
     *                  HTTP server through the agent): without them, C2 compiled those cases as traps
     *                  ({@code Channels.write}, {@code ChannelSelection.keyChanged}) and an application's
     *                  first such call threw the compiled methods away
     * @param plainPeer the other end of {@code plain} (blocking)
     * @return round trips made: fewer than {@code rounds} when the application began pairing meanwhile
     */
    private static int selectorRoundTrips(SocketChannel selecting, SocketChannel blocking, RingConnection echoRing,
                                          RingConnection selectingRing, SocketChannel plain, SocketChannel plainPeer,
                                          int rounds) throws IOException {
        int made = 0;
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        Thread echo = new Thread(() -> {
            BridgeDelegate.INTERNAL.set(Boolean.TRUE);
            try {
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(4096);
                for (int i = 0; i < rounds; i++) {
                    buf.clear().limit(size(i));
                    while (buf.hasRemaining()) {
                        if (blocking.read(buf) < 0) throw new IOException("warm-up channel ended");
                    }
                    buf.flip();
                    while (buf.hasRemaining()) blocking.write(buf);
                }
            } catch (IOException | RuntimeException | Error e) {
                failed.set(e);
                echoRing.close(); // the selecting side's read ends with EOF, not a hang
            }
        }, "sora-warmup-echo");
        echo.setDaemon(true);
        echo.start();
        java.nio.ByteBuffer heap = java.nio.ByteBuffer.allocate(4096);
        java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(4096);
        java.nio.ByteBuffer one = java.nio.ByteBuffer.allocate(1);
        try (java.nio.channels.Selector selector = java.nio.channels.Selector.open();
             java.nio.channels.Selector plainSelector = java.nio.channels.Selector.open()) {
            selecting.configureBlocking(false);
            java.nio.channels.SelectionKey key = selecting.register(selector, java.nio.channels.SelectionKey.OP_READ);
            plain.configureBlocking(false);
            plain.register(selector, java.nio.channels.SelectionKey.OP_READ);
            java.nio.channels.SelectionKey plainKey = plain.register(plainSelector, java.nio.channels.SelectionKey.OP_READ);
            long deadline = System.nanoTime() + 5_000_000_000L;
            for (; made < rounds && failed.get() == null && !applicationPairing; made++) {
                java.nio.ByteBuffer buf = (made & 1) == 0 ? heap : direct;
                int n = size(made);
                buf.clear().limit(n);
                while (buf.hasRemaining()) {
                    if (selecting.write(buf) == 0) Thread.onSpinWait(); // a 64 KiB ring holds every message
                }
                buf.clear().limit(n);
                boolean plainRound = (made & 7) == 3;
                if (plainRound) {
                    plainPeer.write(one.clear());
                    plainKey.interestOps(0);
                    plainSelector.selectNow();
                    plainSelector.selectedKeys().clear();
                    plainKey.interestOps(java.nio.channels.SelectionKey.OP_READ);
                }
                if ((made & 3) == 1) {
                    // the echo's first bytes in the ring before this select begins (bounded by the deadline)
                    while (selectingRing.inputStream().available() == 0 && failed.get() == null) {
                        if (System.nanoTime() - deadline > 0) throw new IOException("warm-up channel stalled");
                        Thread.yield(); // the echo's thread may need this CPU (a JVM with one)
                    }
                }
                while (buf.hasRemaining()) {
                    if (System.nanoTime() - deadline > 0) throw new IOException("warm-up channel stalled");
                    selector.select(100);
                    selector.selectedKeys().clear();
                    // and now and then a clear of the set once empty, as an application's loop may: else
                    // C2 compiled HashMap.clear's empty case as a trap (-XX:+LogCompilation, 2026-11-28)
                    if ((made & 3) == 2) selector.selectedKeys().clear();
                    if (plainRound) plain.read(one.clear()); // its byte, if there: the selector reported it too
                    int r;
                    while ((r = selecting.read(buf)) > 0 && buf.hasRemaining()) {
                        // what is there
                    }
                    if (r < 0) throw new IOException("warm-up channel ended");
                }
                if ((made & 255) == 128) {
                    // a key cancelled and its channel registered again, as a server's connections end: without
                    // it C2 compiled the invalid key's branches of ChannelSelection.selected and interest as
                    // traps, and the application's first closed connection threw the compiled select away
                    // (-XX:+LogCompilation, 2026-11-28: the nio row's server, at its connections' close)
                    key.cancel();
                    selector.selectNow();
                    key = selecting.register(selector, java.nio.channels.SelectionKey.OP_READ);
                }
            }
            key.cancel();
            if (made < rounds) echoRing.close(); // stopped early: the echo's read ends at once
            Throwable f = made < rounds ? null : failed.get();
            if (f != null) throw new IOException("warm-up echo failed: " + f, f);
        } finally {
            try {
                echo.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return made;
    }

    /** Mostly small messages, as requests are, and some of 4 KiB. */
    private static int size(int round) {
        return (round & 3) == 3 ? 4096 : 64 << (round & 3);
    }

    /** One throw-away pairing over loopback, through the same code as the application's. */
    private static void pairOnce(ShmTransport shm) {
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofSeconds(5));
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ServerBinding binding = shm.listen((InetSocketAddress) server.getLocalSocketAddress(),
                    key -> new AcceptPolicy.Allow(options));
            running = binding;
            try (binding;
                 Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                 Socket accepted = server.accept()) {
                // the application's hooks class, as in the data path, with reads bounded as the old
                // private hooks bounded them: a stuck warm-up ends
                client.setSoTimeout(5000);
                accepted.setSoTimeout(5000);
                FastConnection[] ends = pair(shm, binding, options, client, accepted);
                if (ends != null) {
                    runningEnds(ends);
                    try (FastConnection a = ends[0]; FastConnection b = ends[1]) {
                        exchange(a.outputStream(), b.inputStream());
                        exchange(b.outputStream(), a.inputStream());
                    } finally {
                        runningEnds = null;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // a warm-up only
        } finally {
            running = null;
        }
    }

    /**
     * Pairs the loopback connection {@code client} / {@code accepted} through the application's code
     * (the socket warm-up's and the channel warm-up's alike): {client's connection, server's}, or null
     * when either end fell back (a half that paired is closed).
     */
    private static FastConnection[] pair(ShmTransport shm, ServerBinding binding, PairingOptions options, Socket client,
                                         Socket accepted) throws IOException {
        ConnectionKey key = new ConnectionKey((InetSocketAddress) client.getLocalSocketAddress(),
                (InetSocketAddress) client.getRemoteSocketAddress());
        PairingResult c = shm.connect(key, options, PairedSocket.hooks(client));
        PairingResult s = binding.awaitPairing(key, options.fallbackWait(), PairedSocket.hooks(accepted));
        if (c instanceof PairingResult.Paired cp && s instanceof PairingResult.Paired sp) {
            return new FastConnection[] {cp.connection(), sp.connection()};
        }
        close(c);
        close(s);
        return null;
    }

    private static void exchange(OutputStream out, InputStream in) throws IOException {
        byte[] buf = new byte[1024];
        for (int i = 0; i < 64; i++) {
            out.write(buf, 0, buf.length);
            int got = 0;
            while (got < buf.length) {
                int n = in.read(buf, got, buf.length - got);
                if (n < 0) {
                    throw new IOException("warm-up connection ended early");
                }
                got += n;
            }
        }
    }

    private static void close(PairingResult r) throws IOException {
        if (r instanceof PairingResult.Paired p) {
            p.connection().close();
        }
    }
}
