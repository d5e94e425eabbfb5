package io.sora.transport;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The receive half of a fast connection, for any {@link RingMedium}: socket read semantics done once.
 *
 * <ul>
 *   <li>{@code read} blocks until at least one byte is there, then returns what is there (up to
 *       {@code len}); a zero-length read returns 0 at once.</li>
 *   <li>{@code SO_TIMEOUT} ({@link SocketHooks#soTimeoutMillis()}, read as the read begins, as the JDK's) ends a
 *       wait with {@link SocketTimeoutException}; no byte is lost and the stream stays usable.</li>
 *   <li>After the peer shut down its output, closed, or died, the bytes already in the ring are
 *       returned, then -1 forever.</li>
 *   <li>After {@link #shutdown()} reads return -1 and what the peer sends is discarded.</li>
 *   <li>After {@link #closeLocal()} reads throw {@code SocketException("Socket closed")}, including
 *       a read blocked at that moment.</li>
 * </ul>
 *
 * <p>Threading: reads are serialised by a lock (one reader at a time, as {@code NioSocketImpl}
 * does); {@link #available()}, {@link #shutdown()}, {@link #closeLocal()} and {@link #wake()} may be
 * called from any thread. Steady-state reads allocate nothing: one copy from the ring to the caller's
 * array (two when the bytes wrap around the end of the ring).
 */
public final class RingInputStream extends InputStream {
    /** {@code waitNanos}: do not wait; return 0 when nothing is there (a non-blocking channel). */
    public static final long NO_WAIT = -1;
    /** {@code waitNanos} of the stream's own reads: the socket's SO_TIMEOUT, read as the read begins. */
    private static final long WAIT_SO_TIMEOUT = -2;
    private static final int EOF_FLAGS = RingMedium.OUTPUT_SHUTDOWN | RingMedium.CLOSED | RingMedium.DEAD;
    private static final VarHandle CONSUMED;
    private static final VarHandle DELIVERED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CONSUMED = lookup.findVarHandle(RingInputStream.class, "consumed", long.class);
            DELIVERED = lookup.findVarHandle(RingInputStream.class, "delivered", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private static final long CONSUMED_OFFSET = MemoryAccess.fieldOffset(RingInputStream.class, "consumed");
    private static final long DELIVERED_OFFSET = MemoryAccess.fieldOffset(RingInputStream.class, "delivered");

    private final RingMedium medium;
    private final SocketHooks hooks;
    private final int capacity;
    /** {@code capacity - 1} when the capacity is a power of two, else -1 (use {@code %}). */
    private final int mask;
    /** Credits are returned once this many bytes were consumed (or the ring is empty). */
    private final int creditBatch;
    /** {@link RingMedium#peerMaySkip}: a look that finds bytes jumps to the peer's skip first. */
    private final boolean skips;
    /** Guarded by {@code lock}. */
    private final AdaptiveWait wait;
    /** What the wake-up of the last sleep cost, as the medium tells it (-1: unknown); guarded by the lock. */
    private long wakeLatency = -1;
    /** The consumer cursor last published to the peer; guarded by {@code lock}. */
    private long published;
    private final ReentrantLock lock = new ReentrantLock();
    /** What {@link #whenIdle} left for the last read to leave. */
    private final IdleAction onIdle = new IdleAction();
    private final byte[] single = new byte[1];
    /** My consumer cursor; written by the lock holder (release), read by {@link #available()}. */
    private long consumed;
    /** Bytes handed to the application; written by the lock holder (release). */
    private long delivered;
    /** Set once -1 was returned for a peer EOF, so late bytes (a racing close) never resurrect the stream. */
    private boolean eofReturned;
    /** Whether the peer read every byte this side wrote (the other direction's stream), or null: not known. */
    private volatile RingOutputStream peerReadAll;

    /**
     * Tells this stream where to learn whether the peer read all that this side wrote: the other direction's
     * stream ({@link RingOutputStream#peerReadAll}). A reference, not a method reference: a connection's set-up
     * runs interpreted in a cold JVM's first connections, where each lambda capture goes through the
     * call site's method handles.
     */
    void peerReadAll(RingOutputStream writer) {
        this.peerReadAll = writer;
    }

    /** Set once the peer's abortive close ({@link RingMedium#RESET}) was reported: reads report it again. */
    private boolean resetSeen;
    private volatile boolean closed;
    private volatile boolean inputShutdown;
    private volatile Thread waiter;
    /** The socket's own TCP stream ({@link #tcpFallback}); null: the peer's bytes never move there. */
    private volatile java.lang.ref.WeakReference<InputStream> tcp;
    /** Every byte before the peer's switch was read: reads go to {@link #tcp}, for good (set by the lock holder). */
    private volatile boolean onTcp;
    /** {@link #look}: the ring is read up to the peer's switch; what follows is on TCP. */
    private static final long SWITCHED = -2;

    /**
     * @param spinIterations 0: sleep at once when nothing is there; else spin and yield first, as
     *                       {@link AdaptiveWait} learns
     */
    public RingInputStream(RingMedium medium, SocketHooks hooks, int spinIterations) {
        this.medium = Objects.requireNonNull(medium, "medium");
        this.hooks = Objects.requireNonNull(hooks, "hooks");
        if (spinIterations < 0) throw new IllegalArgumentException("spinIterations must be >= 0: " + spinIterations);
        this.capacity = medium.receiveCapacity();
        if (capacity <= 0) throw new IllegalArgumentException("receiveCapacity must be > 0: " + capacity);
        this.mask = Integer.bitCount(capacity) == 1 ? capacity - 1 : -1;
        this.creditBatch = Math.max(1, capacity / 4);
        this.skips = medium.peerMaySkip();
        this.wait = new AdaptiveWait(spinIterations > 0);
    }

    /**
     * A socket's stream: {@code tcpStream}, the socket's own TCP stream, is read once the ring is read up
     * to where the peer moved its bytes to TCP ({@link RingOutputStream#tcpFallback}); the peer moves only
     * to an end that offered to follow ({@link #offerTcpFollow}). Ignored where the medium cannot carry the switch.
     */
    public void tcpFallback(InputStream tcpStream) {
        if (RingOutputStream.SWITCH_AFTER_MILLIS > 0 && medium.carriesTcpSwitch()) {
            // weakly, as the writer's (RingOutputStream#tcpFallback)
            tcp = new java.lang.ref.WeakReference<>(Objects.requireNonNull(tcpStream, "tcpStream"));
        }
    }

    /**
     * Tells the peer that this end's reads will follow a switch: every read of a socket's stream goes
     * through a stream given its TCP stream first ({@link #tcpFallback}). Said as a socket is paired, before
     * its application has it: a program that writes all it has before it asks for its input stream (an echo
     * client of large messages) must not leave the peer's writer unable to move while this end's writer
     * waits for it, and said later (at a stream's first use) it could reach the next connection of a kept
     * segment, were the socket closed meanwhile (found in review, 2026-11-29).
     */
    public void offerTcpFollow() {
        if (RingOutputStream.SWITCH_AFTER_MILLIS > 0 && medium.carriesTcpSwitch()) medium.offerTcpFollow();
    }

    /** Whether the peer moved its bytes to TCP ({@link RingOutputStream#tcpFallback}), read up to there or not. */
    public boolean peerMoved() {
        return medium.peerSwitchedAt() >= 0;
    }

    /**
     * What this end's reads have done, for its writer's move to TCP ({@link RingOutputStream#ownReader}):
     * -1 while a read is under way (it holds the lock), else the bytes handed to the application so far.
     * Two equal values a while apart: nothing on this side read meanwhile.
     */
    long readProgress() {
        return lock.isLocked() ? -1 : acquireDelivered();
    }

    /** Whether reads go to TCP (the peer's bytes moved there and every earlier one was read). */
    public boolean onTcp() {
        return onTcp;
    }

    @Override
    public int read() throws IOException {
        // The lock is reentrant: holding it across the inner read keeps the shared one-byte array ours.
        long deadline = lockRead(WAIT_SO_TIMEOUT);
        try {
            lock.lock(); // released by readHeld
            int n = readHeld(single, null, 0, 1, WAIT_SO_TIMEOUT, deadline);
            return n < 0 ? -1 : single[0] & 0xff;
        } finally {
            unlock();
        }
    }

    /**
     * Whether this JDK's socket reads count the wait for the read lock in {@code SO_TIMEOUT}: JDK 25's
     * {@code NioSocketImpl.read} takes it with {@code tryLock} (a read with a timeout behind another
     * thread's read times out), JDK 17's waits for it without bound (17.0.15 has the same {@code tryLock}
     * method, for its accept only). Read from the JDK's own class file, once, by the first read that
     * finds the lock taken and has a timeout: whether {@code read([BII)I} calls {@code tryLock}.
     */
    static boolean lockWaitInTimeout() {
        int v = lockWaitInTimeout;
        if (v < 0) lockWaitInTimeout = v = JdkSocketReads.readCallsTryLock() ? 1 : 0;
        return v == 1;
    }

    private static volatile int lockWaitInTimeout = -1;

    /**
     * Takes the read lock; returns 0, or the read's deadline when it waited for the lock with the socket's
     * {@code SO_TIMEOUT} counting ({@link #lockWaitInTimeout}): then "Read timed out" if it passed first.
     */
    private long lockRead(long waitNanos) throws IOException {
        if (lock.tryLock()) return 0;
        if (waitNanos != WAIT_SO_TIMEOUT) {
            lock.lock(); // a channel's read waits for the lock as the JDK's blockingRead does
            return 0;
        }
        int ms = hooks.soTimeoutMillis();
        long deadline = deadline(ms); // before the class file is read (once), which must not eat the timeout
        if (!lockWaitInTimeout()) {
            lock.lock(); // JDK 17: the timeout read under the lock (readHeld)
            return 0;
        }
        if (ms <= 0) {
            lock.lock(); // JDK 25: the timeout as the read began (none), whatever is set meanwhile
            return Long.MAX_VALUE;
        }
        boolean interrupted = false;
        try {
            for (;;) {
                long left = deadline - System.nanoTime();
                if (left <= 0) throw new SocketTimeoutException("Read timed out");
                try {
                    if (lock.tryLock(left, java.util.concurrent.TimeUnit.NANOSECONDS)) return deadline;
                } catch (InterruptedException e) {
                    interrupted = true; // as the JDK's: kept for later, the wait goes on
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        return read(b, null, off, len, WAIT_SO_TIMEOUT);
    }

    /**
     * A channel's read (the socket's {@code SO_TIMEOUT} plays no part): into {@code dst}'s remaining
     * bytes, heap or direct, advancing its position.
     *
     * @param waitNanos {@link #NO_WAIT}: return 0 at once when nothing is there (non-blocking channel);
     *                  0: wait as long as it takes; above 0: at most that long, then
     *                  {@link SocketTimeoutException} (the adaptor stream's timeout)
     * @return bytes read, 0 only when {@code dst} is full or (no wait) nothing was there, -1 at EOF
     */
    public int read(ByteBuffer dst, long waitNanos) throws IOException {
        if (waitNanos == NO_WAIT) return readNow(dst);
        if (waitNanos < NO_WAIT) throw new IllegalArgumentException("waitNanos must be >= -1: " + waitNanos);
        int len = dst.remaining();
        if (dst.hasArray()) {
            int n = read(dst.array(), null, dst.arrayOffset() + dst.position(), len, waitNanos);
            if (n > 0) dst.position(dst.position() + n);
            return n;
        }
        int n = read(null, dst, dst.position(), len, waitNanos);
        if (n > 0) dst.position(dst.position() + n);
        return n;
    }

    /**
     * A non-blocking channel's read: as {@link #read(ByteBuffer, long)} with {@link #NO_WAIT}, into
     * {@code dst}'s remaining bytes, advancing its position; 0 when nothing is there, -1 at EOF.
     *
     * <p>A method of its own, apart from the waiting reads: one body shared by both kinds made the JIT
     * compile a profile of one kind and throw the code away at the first read of the other (a selector
     * server in a JVM whose warm-up ran blocking streams: {@code -XX:+LogCompilation} showed the
     * waiting read compiled by C2, trapped at its no-wait branch and recompiled, 80-110 ms of C2
     * each time, on a 2-CPU machine during the application's first second). Neither kind's code now
     * carries the other's.
     */
    public int readNow(ByteBuffer dst) throws IOException {
        int len = dst.remaining();
        if (len == 0) return 0;
        int n = dst.hasArray() ? readNow(dst.array(), null, dst.arrayOffset() + dst.position(), len)
                : readNow(null, dst, dst.position(), len);
        if (n > 0) dst.position(dst.position() + n);
        return n;
    }

    private int readNow(byte[] b, ByteBuffer bb, int off, int len) throws IOException {
        lock.lock();
        try {
            long avail = look();
            if (avail == SWITCHED) throw cannotFollow(); // a peer moves only to an end that offered to follow
            if (avail < 0) return -1;
            long c = consumed;
            if (avail > 0) return more(b, bb, off, len, copyOut(c, b, bb, off, (int) Math.min(len, avail), avail));
            // the caller goes to wait elsewhere (a selector): every credit held back goes first
            if (c != published) publishCredits(c);
            return 0;
        } finally {
            unlock();
        }
    }

    /**
     * What a read finds in the ring now (the lock held): the bytes there (> 0), 0 for none yet, or -1
     * at the end (then -1 for good); throws once the socket is closed here. Both reads, the waiting
     * one and {@link #readNow}, look through this.
     */
    private long look() throws SocketException {
        for (;;) {
            // once at the end, at the end for good, even after a close (the JDK's socket: "emulate legacy
            // behavior to return -1, even if socket is closed"); a shutdown input's -1 counts as that end
            if (eofReturned) return -1;
            if (closed) throw new SocketException("Socket closed");
            if (resetSeen) throw new SocketException("Connection reset");
            if (inputShutdown) {
                eofReturned = true;
                return -1;
            }
            long c = consumed;
            long p = medium.producedByPeer();
            long avail = p - c;
            if (skips && avail > 0) {
                c = jumpSkip(c, p);
                avail = p - c;
            }
            if (avail > capacity || avail < 0) {
                // a faulty peer (its cursor is shared memory it writes): broken, not an index out of bounds
                // in the copy (found in review, 2026-11-29), and never bytes of the other ring
                resetSeen = true;
                throw new SocketException("Connection reset: the peer's write cursor is " + avail
                        + " bytes ahead of this reader in a " + capacity + "-byte ring");
            }
            // the peer's later bytes on TCP: looked at before its flags, which it publishes after the switch. Not
            // behind "tcp != null": the warm-up's streams have no TCP stream, and a branch its profile never saw
            // taken was a trap in the compiled read, the application's first empty read a deoptimisation (more
            // slow round trips early in a run, measured: pp4k's mean 4.6-6.9 us against 3.6-4.1). A peer moves
            // only to an end that offered to follow, which a stream without a TCP stream never does.
            if (avail == 0 && medium.peerSwitchedAt() == c) return SWITCHED;
            if (avail > 0 || (medium.peerFlags() & EOF_FLAGS) == 0) return avail;
            // Flags are published after the final cursor: re-read it before declaring EOF.
            if (medium.producedByPeer() == c) {
                // and after a switch to TCP: one that came between this read's look at it above and the flags
                // (the writer switched, wrote by TCP, then shut down or closed) is seen now, or the end would
                // be read where the TCP bytes are (found in review, 2026-11-29)
                if (medium.peerSwitchedAt() == c) return SWITCHED;
                // an abortive close: the bytes sent before it were read, then the reset, for good (as the
                // JDK's socket after a TCP reset)
                int flags = medium.peerFlags();
                // and a peer process that died with bytes of ours unread: its kernel reset the connection (a
                // truncated answer looked whole: EOF; found in review, 2026-11-29)
                if ((flags & RingMedium.RESET) != 0
                        || ((flags & RingMedium.DEAD) != 0 && medium.consumedByPeerExact() && peerReadAll != null
                            && !peerReadAll.peerReadAll())) {
                    resetSeen = true;
                    throw new SocketException("Connection reset");
                }
                eofReturned = true;
                return -1;
            }
        }
    }

    /** As {@link #read(ByteBuffer, long)}, into an array: the adaptor stream of a channel. */
    public int read(byte[] b, int off, int len, long waitNanos) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (waitNanos == NO_WAIT) return len == 0 ? 0 : readNow(b, null, off, len);
        if (waitNanos < NO_WAIT) throw new IllegalArgumentException("waitNanos must be >= -1: " + waitNanos);
        return read(b, null, off, len, waitNanos);
    }

    /**
     * Into {@code b} or (when b is null) {@code bb}, at absolute index {@code off}, waiting as
     * {@code waitNanos} says (never {@link #NO_WAIT}: {@link #readNow}); see the public forms.
     */
    private int read(byte[] b, ByteBuffer bb, int off, int len, long waitNanos) throws IOException {
        if (len == 0) return 0;
        long deadline = lockRead(waitNanos);
        return readHeld(b, bb, off, len, waitNanos, deadline);
    }

    /**
     * As {@link #read(byte[], ByteBuffer, int, int, long)}, the lock taken (and released here);
     * {@code deadline}: 0 until computed as the read is about to block, Long.MAX_VALUE for no timeout.
     */
    private int readHeld(byte[] b, ByteBuffer bb, int off, int len, long waitNanos, long deadline) throws IOException {
        boolean interrupted = false;
        boolean closeByInterrupt = false;
        // the socket's timeout as the read begins, as the JDK's read takes it: one set meanwhile by another
        // thread is the next read's (taken when about to block until 2026-11-29, it could end this one)
        try {
            int soTimeout = waitNanos == WAIT_SO_TIMEOUT && deadline == 0 ? hooks.soTimeoutMillis() : 0;
            boolean waiting = false;
            boolean slept = false;
            for (;;) {
                if (onTcp) return fromTcp(b, bb, off, len);
                long avail = look();
                if (avail == SWITCHED) {
                    onTcp = true;
                    continue;
                }
                if (avail < 0) return -1;
                long c = consumed;
                if (avail > 0) {
                    if (waiting) {
                        if (slept) wait.slept(wakeLatency); else wait.caught();
                    }
                    return more(b, bb, off, len, copyOut(c, b, bb, off, (int) Math.min(len, avail), avail));
                }
                if (!waiting) {
                    waiting = true;
                    wait.begin(medium);
                    // the ring is empty: hand back every credit held back, before anyone waits on it
                    if (c != published) publishCredits(c);
                }
                if (!slept && wait.idle()) continue;
                slept = true;
                if (deadline == 0) {
                    deadline = waitNanos == WAIT_SO_TIMEOUT ? deadline(soTimeout) : deadlineNanos(waitNanos);
                }
                interrupted |= sleep(deadline);
                if (interrupted && VirtualThreads.isVirtual(Thread.currentThread())) {
                    closeByInterrupt = true;
                    throw VirtualThreads.closedByInterrupt();
                }
            }
        } finally {
            wait.end();
            unlock();
            if (interrupted) Thread.currentThread().interrupt();
            // as the JDK's socket does for a virtual thread: the interrupt closes the socket (lock released first)
            if (closeByInterrupt) VirtualThreads.closeSocket(hooks);
        }
    }

    /** After the switch (the lock held): a read of the TCP stream; a socket's stream reads into arrays only. */
    private int fromTcp(byte[] b, ByteBuffer bb, int off, int len) throws IOException {
        if (b == null || tcp == null) throw cannotFollow();
        int n = tcpStream().read(b, off, len);
        if (n > 0) releaseDelivered(delivered + n);
        return n;
    }

    /** The socket's TCP stream ({@link #tcpFallback} given); "Socket closed" once the socket was collected. */
    private InputStream tcpStream() throws SocketException {
        InputStream t = tcp.get();
        if (t == null) throw new SocketException("Socket closed");
        return t;
    }

    /** Never expected: this end did not offer to follow, yet the peer's bytes went to TCP. Loud, not an EOF. */
    private static SocketException cannotFollow() {
        return new SocketException("Connection reset: the peer's bytes moved to TCP, which this end does not read");
    }

    private static long deadlineNanos(long nanos) {
        if (nanos <= 0) return Long.MAX_VALUE;
        long d = System.nanoTime() + nanos;
        return d == 0 || d == Long.MAX_VALUE ? d - 1 : d;
    }

    private static long deadline(int timeoutMillis) {
        if (timeoutMillis <= 0) return Long.MAX_VALUE;
        long d = System.nanoTime() + timeoutMillis * 1_000_000L;
        return d == 0 || d == Long.MAX_VALUE ? d - 1 : d;
    }

    /** Sleeps until woken or the deadline; returns whether an interrupt was swallowed (TCP reads ignore it). */
    private boolean sleep(long deadline) throws SocketTimeoutException {
        waiter = Thread.currentThread();
        long sleptAt = System.nanoTime();
        medium.announceReaderWaiting(true);
        try {
            if (readyOrEnded()) return false;
            long remaining = 0;
            if (deadline != Long.MAX_VALUE) {
                remaining = deadline - System.nanoTime();
                if (remaining <= 0) throw new SocketTimeoutException("Read timed out");
            }
            if (!medium.awaitReader(remaining)) {
                if (remaining == 0) LockSupport.park(this);
                else LockSupport.parkNanos(this, remaining);
            }
            return Thread.interrupted();
        } finally {
            medium.announceReaderWaiting(false);
            waiter = null;
            wakeLatency = medium.wakeLatencyNanos(true, sleptAt, System.nanoTime());
        }
    }

    private boolean readyOrEnded() {
        return closed || inputShutdown || medium.producedByPeer() != consumed
                || (medium.peerFlags() & EOF_FLAGS) != 0
                || medium.peerSwitchedAt() == consumed;
    }

    /**
     * After a copy of {@code got} bytes (the lock held): the rest of a write the peer publishes in parts
     * as it copies it in ({@link RingMedium#publishStep}), up to {@code len}, so that the application gets
     * the message in one read, as from TCP. Waits only while the writer is in the middle of such a write
     * ({@link RingMedium#peerWriteEnd}: its next part comes within one part's copy), spinning, and at most
     * {@value #MORE_SPINS} times: a writer descheduled in the middle leaves the rest to the next read.
     */
    private int more(byte[] b, ByteBuffer bb, int off, int len, int got) throws SocketException {
        int spins = 0;
        while (got < len) {
            long c = consumed;
            // only the rest of a write in parts: the writes after it are the next read's, as before
            if (medium.peerWriteEnd() - c <= 0) break;
            long p = medium.producedByPeer();
            long avail = p - c;
            if (avail <= 0) {
                if (spins++ >= MORE_SPINS) break;
                Thread.onSpinWait();
                continue;
            }
            if (skips) {
                // a write that waited for room halfway may find the ring empty when it goes on, and skip
                c = jumpSkip(c, p);
                avail = p - c;
                if (avail > capacity) break; // the next read's look fails it as the faulty cursor it is
            }
            got += copyOut(c, b, bb, off + got, (int) Math.min(len - got, avail), avail);
        }
        return got;
    }

    private static final int MORE_SPINS = 512;

    /**
     * Where bytes were found ({@code p} the peer's cursor, above {@code c}, the lock held): the position
     * after the peer's skip, if it skipped past {@code c} (it found the ring empty and went back to the
     * ring's start: the cursors up to its skip carry nothing), else {@code c}. The skip, written before
     * {@code p}, is at most p.
     */
    private long jumpSkip(long c, long p) throws SocketException {
        long to = medium.peerSkipTo();
        if (to <= c) return c;
        if (to >= p) {
            // a faulty peer (its cursors are shared memory it writes): broken, never bytes read at a wrong offset
            resetSeen = true;
            throw new SocketException("Connection reset: the peer skipped to " + to + ", past its write cursor " + p);
        }
        releaseConsumed(to);
        return to;
    }

    private int copyOut(long c, byte[] b, ByteBuffer bb, int off, int n, long avail) {
        int pos = mask >= 0 ? (int) (c & mask) : (int) (c % capacity);
        int first = Math.min(n, capacity - pos);
        if (b != null) {
            medium.readRing(pos, b, off, first);
            if (first < n) medium.readRing(0, b, off + first, n - first);
        } else {
            medium.readRing(pos, bb, off, first);
            if (first < n) medium.readRing(0, bb, off + first, n - first);
        }
        long next = c + n;
        releaseConsumed(next);
        releaseDelivered(delivered + n);
        // Credits go back in batches (a quarter of the ring) while the reader is behind, at once when
        // this read emptied the ring (a writer can only be short of them if the ring is not empty or
        // they were just freed), and before any wait (see read): each publish writes a line the
        // peer's writer reads and may cost it a wake-up. Not for a part of a write the writer is still
        // copying in (RingMedium.publishStep): it has its room, and the rest follows at once (more)
        if ((n == avail && medium.peerWriteEnd() - next <= 0) || next - published >= creditBatch) publishCredits(next);
        return n;
    }

    private void publishCredits(long c) {
        published = c;
        medium.publishConsumed(c);
    }

    /** Bytes readable now without blocking; 0 after shutdown or at EOF. */
    @Override
    public int available() throws IOException {
        if (closed) throw new SocketException("Socket closed");
        if (inputShutdown) return 0;
        // moved, or read up to the peer's switch: what TCP holds (before a read went there too)
        if (tcp != null && (onTcp || medium.peerSwitchedAt() == acquireConsumed())) return tcpStream().available();
        long p = medium.producedByPeer();
        long c = acquireConsumed();
        // not yet jumped by a read: the peer's skip (at most p, read after it) is where its bytes start
        if (skips && p > c) c = Math.max(c, medium.peerSkipTo());
        long avail = p - c;
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, avail));
    }

    /**
     * Whether a read would return at once (bytes, EOF, or a failure): what {@code OP_READ} means.
     * Any thread; exact for the reader thread, a snapshot for others.
     */
    public boolean readable() {
        return closed || inputShutdown || medium.producedByPeer() != acquireConsumed()
                || (medium.peerFlags() & EOF_FLAGS) != 0;
    }

    /** Closes the whole socket, as closing a socket's stream does on TCP. */
    @Override
    public void close() throws IOException {
        hooks.closeSocket();
    }

    /** Bytes returned to the application so far. */
    public long bytesReceived() {
        return acquireDelivered();
    }

    /**
     * Half-close of the receive side: reads return -1 from now on, what is in the ring and what the
     * peer sends later is discarded (credits keep flowing, so the peer never blocks). Idempotent.
     */
    public void shutdown() {
        if (inputShutdown) return;
        inputShutdown = true;
        wake();
        // A blocked reader saw the flag and left, so the lock is free within a wake-up.
        lock.lock();
        try {
            // published under the lock, and only while this end is open: once closed, the medium may hand
            // the rings to the next connection (ShmMedium's kept segments) as soon as no read holds the
            // lock, and a flag published after that would tell that connection's writer to discard its
            // bytes (as RingOutputStream.shutdown does for OUTPUT_SHUTDOWN)
            if (closed) return;
            medium.publishFlags(RingMedium.INPUT_SHUTDOWN);
            long p = medium.producedByPeer();
            releaseConsumed(p);
            publishCredits(p);
        } finally {
            unlock();
        }
    }

    public boolean isShutdown() {
        return inputShutdown;
    }

    /** Local close: a blocked or later read throws {@code SocketException("Socket closed")}. */
    public void closeLocal() {
        closed = true;
        wake();
    }

    /**
     * After {@link #closeLocal}: runs {@code action} once no read is in progress, so that none will touch
     * the ring again (a later one fails before it does): now, on this thread, or when the read in progress
     * leaves, on its thread (it was woken by the close). Runs it at most once.
     */
    void whenIdle(Runnable action) {
        onIdle.set(action, lock);
    }

    /** Releases the lock; the last read to leave a closed stream runs {@link #whenIdle}'s action. */
    private void unlock() {
        lock.unlock();
        if (closed && onIdle.isPending()) onIdle.runIfIdle(lock);
    }

    /** Wakes the reader if it sleeps; safe to call at any time from any thread. */
    public void wake() {
        medium.wakeLocalReader();
        Thread t = waiter;
        if (t != null) LockSupport.unpark(t);
    }

    /** A release store of {@code consumed} (through {@link MemoryAccess} where it is fast from a cold JVM). */
    private void releaseConsumed(long value) {
        if (MemoryAccess.FAST) MemoryAccess.putLongRelease(this, CONSUMED_OFFSET, value);
        else CONSUMED.setRelease(this, value);
    }

    /** An acquire load of {@code consumed}. */
    private long acquireConsumed() {
        return MemoryAccess.FAST ? MemoryAccess.getLongAcquire(this, CONSUMED_OFFSET) : (long) CONSUMED.getAcquire(this);
    }

    /** A release store of {@code delivered} (through {@link MemoryAccess} where it is fast from a cold JVM). */
    private void releaseDelivered(long value) {
        if (MemoryAccess.FAST) MemoryAccess.putLongRelease(this, DELIVERED_OFFSET, value);
        else DELIVERED.setRelease(this, value);
    }

    /** An acquire load of {@code delivered}. */
    private long acquireDelivered() {
        return MemoryAccess.FAST ? MemoryAccess.getLongAcquire(this, DELIVERED_OFFSET) : (long) DELIVERED.getAcquire(this);
    }
}
