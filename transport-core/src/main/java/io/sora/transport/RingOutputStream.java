package io.sora.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.net.SocketException;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The send half of a fast connection, for any {@link RingMedium}: socket write semantics done once.
 *
 * <ul>
 *   <li>{@code write} returns when every byte is in the peer's ring, blocking for credits while the
 *       ring is full; writes larger than the ring go in pieces. Each write is visible to the peer on
 *       return, so {@link #flush()} has nothing to do.</li>
 *   <li>After {@link #shutdown()} the peer reads the bytes written so far, then EOF; a later write
 *       throws {@code SocketException("Socket output is shutdown")}.</li>
 *   <li>A peer that closed gives {@code SocketException("Broken pipe")}, one that died or closed
 *       abortively ({@code SO_LINGER} 0) {@code SocketException("Connection reset by peer")}, also to a
 *       writer blocked for credits.
 *       A peer that shut down its input accepts and discards (as TCP does).</li>
 *   <li>After {@link #closeLocal()} writes throw {@code SocketException("Socket closed")}, including
 *       a write blocked at that moment.</li>
 * </ul>
 *
 * <p>Threading: writes are serialised by a lock (one writer at a time); {@link #shutdown()},
 * {@link #closeLocal()} and {@link #wake()} may be called from any thread. Steady-state writes
 * allocate nothing: one copy from the caller's array into the ring (two at the wrap-around).
 */
public final class RingOutputStream extends OutputStream {
    /** Peer flags that end a wait for credits (the peer's own half-close does not). */
    private static final int STOP_FLAGS = RingMedium.CLOSED | RingMedium.DEAD | RingMedium.INPUT_SHUTDOWN;
    private static final VarHandle SENT;
    private static final VarHandle PRODUCED;

    static {
        try {
            SENT = MethodHandles.lookup().findVarHandle(RingOutputStream.class, "sent", long.class);
            PRODUCED = MethodHandles.lookup().findVarHandle(RingOutputStream.class, "produced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private static final long SENT_OFFSET = MemoryAccess.fieldOffset(RingOutputStream.class, "sent");
    private static final long PRODUCED_OFFSET = MemoryAccess.fieldOffset(RingOutputStream.class, "produced");

    private final RingMedium medium;
    private final SocketHooks hooks;
    private final int capacity;
    /** {@code capacity - 1} when the capacity is a power of two, else -1 (use {@code %}). */
    private final int mask;
    /** Guarded by {@code lock}. */
    private final AdaptiveWait wait;
    /** What the wake-up of the last sleep cost, as the medium tells it (-1: unknown); guarded by the lock. */
    private long wakeLatency = -1;
    /** The peer's consumer cursor as last read; only the lock holder touches it. */
    private long consumedCache;
    /**
     * {@link RingMedium#keepWithin} (0: never skips), and the last cursor skipped to: the peer's credits may
     * lag behind it (its reader jumps the skipped cursors at its next read), and until they pass it the
     * ring is empty up to it. Written under the lock before {@link #produced}'s release, so a thread that
     * acquired that reads it as fresh.
     */
    private final int keepWithin;
    private long skippedTo;
    /** The ring's round (cursor without the offset) whose emptiness a write last looked at for a skip. */
    private long skipLookedAt = -1;
    private final ReentrantLock lock = new ReentrantLock();
    /** What {@link #whenIdle} left for the last write to leave. */
    private final IdleAction onIdle = new IdleAction();
    private final byte[] single = new byte[1];
    /** My producer cursor into the peer's ring; only the lock holder touches it. */
    private long produced;
    /** Bytes accepted from the application (release store by the lock holder). */
    private long sent;
    /** Writes that found the peer gone (closed, reset, dead); only the lock holder touches it. */
    private int writesAfterPeerGone;
    /** Bytes taken and dropped after the peer's orderly close, at most {@code capacity}; the lock holder's. */
    private long takenAfterPeerGone;
    /** A gathering write is under way ({@link #gathering}); only the lock holder touches these. */
    private boolean gathering;
    private boolean gatheredAfterPeerGone;
    /** {@link #produced} as the gathering write began: what an orderly close read all of. */
    private long gatherStart;
    private volatile boolean closed;
    private volatile boolean outputShutdown;
    private volatile Thread waiter;
    /**
     * The socket's own TCP stream ({@link #tcpFallback}), where this end's bytes go once both ends wait
     * for room in full rings and neither reads; null: they never move.
     */
    private volatile java.lang.ref.WeakReference<OutputStream> tcp;
    /** The medium can move this direction to TCP (and the switch is on): a waiting writer looks again now and then. */
    private final boolean switchable;
    /** {@link RingMedium#writerStallNanos} (0: the peer sees this writer wait at once); the lock holder's. */
    private final long stallNanos;
    /** This writer's stall was told to the peer ({@link RingMedium#writerStalled}); the lock holder's. */
    private boolean stallTold;
    /** This end's bytes go by {@link #tcp} since the switch, for good (set by the lock holder). */
    private volatile boolean onTcp;

    /**
     * How long both ends must have waited for room, neither ring drained meanwhile, before this end's bytes
     * go by TCP ({@code -Dsora.ring.tcpSwitchAfter=MS}; 0: never). A ring holds what the receiver's
     * {@code rcvbuf} says (64 KiB by default), where loopback TCP buffers megabytes: two ends that each write
     * more than that before reading (an echo of large messages read piece by piece, a pipelined client)
     * waited for each other for ever; over TCP the kernel's buffers take the bytes. docs/shm.md, "Buffering".
     */
    public static final long SWITCH_AFTER_MILLIS = Math.max(0, Long.getLong("sora.ring.tcpSwitchAfter", 10));
    private static final long SWITCH_AFTER_NANOS = SWITCH_AFTER_MILLIS * 1_000_000L;

    /** Why a direction moved to TCP, as every medium traces it ({@code JSOR.67 shm_tcp_switch}'s reason). */
    public static final String SWITCH_REASON = "this end waited " + SWITCH_AFTER_MILLIS + " ms on a full ring while the"
            + " peer's writer waited too, or had moved, and nothing on this end read meanwhile: this end's bytes go by"
            + " TCP, as the kernel would have buffered them";

    /**
     * @param spinIterations 0: sleep at once when the ring is full; else spin and yield first, as
     *                       {@link AdaptiveWait} learns
     */
    public RingOutputStream(RingMedium medium, SocketHooks hooks, int spinIterations) {
        this.medium = Objects.requireNonNull(medium, "medium");
        this.hooks = Objects.requireNonNull(hooks, "hooks");
        if (spinIterations < 0) throw new IllegalArgumentException("spinIterations must be >= 0: " + spinIterations);
        this.capacity = medium.sendCapacity();
        if (capacity <= 0) throw new IllegalArgumentException("sendCapacity must be > 0: " + capacity);
        this.mask = Integer.bitCount(capacity) == 1 ? capacity - 1 : -1;
        int within = medium.keepWithin();
        this.keepWithin = mask >= 0 && within > 0 && within < capacity && Integer.bitCount(within) == 1 ? within : 0;
        this.wait = new AdaptiveWait(spinIterations > 0);
        this.switchable = SWITCH_AFTER_NANOS > 0 && medium.carriesTcpSwitch();
        this.stallNanos = switchable ? Math.min(medium.writerStallNanos(), SWITCH_AFTER_NANOS / 2) : 0;
    }

    /**
     * A socket's stream: {@code tcpStream}, the socket's own TCP stream, takes this end's bytes if both
     * ends come to wait for room in full rings ({@link #SWITCH_AFTER_MILLIS}) and the peer's reader follows
     * ({@link RingMedium#offerTcpFollow}): from then on every write goes there. Ignored where the medium
     * cannot carry the switch ({@link RingMedium#carriesTcpSwitch}) or the switch is off.
     */
    public void tcpFallback(OutputStream tcpStream) {
        // weakly: a fast connection must not keep its socket reachable (a socket dropped unclosed is cleaned
        // once collected, as TCP's); the application's stream holds it (the agent's PinnedStreams)
        if (switchable) tcp = new java.lang.ref.WeakReference<>(Objects.requireNonNull(tcpStream, "tcpStream"));
    }

    /** This end's reads ({@link #ownReader}); null: none to see. */
    private volatile RingInputStream ownReader;

    /** Whether this end's bytes go by TCP (see {@link #tcpFallback}). */
    public boolean onTcp() {
        return onTcp;
    }

    @Override
    public void write(int b) throws IOException {
        lock.lock();
        try {
            single[0] = (byte) b;
            write(single, 0, 1);
        } finally {
            unlock();
        }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) return; // nothing, even once closed or shut down, as the JDK's socket stream
        write(b, null, off, len, true, null);
    }

    /**
     * A channel's write of {@code src}'s remaining bytes, heap or direct, advancing its position by each
     * part as it is copied in: a write that fails part-way (a close, an interrupt, the peer gone) leaves
     * the position after the bytes the peer will get, so the channel can count them as TCP's write does.
     *
     * @param block true: every byte, waiting for credits (a blocking channel); false: what fits now,
     *              possibly 0 (a non-blocking channel)
     * @return bytes written
     */
    public int write(ByteBuffer src, boolean block) throws IOException {
        int len = src.remaining();
        return src.hasArray()
                ? write(src.array(), null, src.arrayOffset() + src.position(), len, block, src)
                : write(null, src, src.position(), len, block, src);
    }

    /**
     * From {@code b} or (when b is null) {@code bb} at absolute index {@code off}; returns bytes written.
     * {@code advance}, where not null, has its position moved on by each part as it is taken.
     */
    private int write(byte[] b, ByteBuffer bb, int off, int len, boolean block, ByteBuffer advance) throws IOException {
        lock.lock();
        boolean interrupted = false;
        boolean closeByInterrupt = false;
        int written = 0;
        try {
            ensureWritable();
            if (onTcp) return written + toTcp(b, off, len);
            boolean waiting = false;
            boolean slept = false;
            long waitBegan = 0;
            long readSeen = 0;      // this end's reads, as ownReader told them when last looked at
            long readIdleSince = 0; // since when they stood still with no read under way
            while (len > 0) {
                ensureWritable();
                int peer = medium.peerFlags();
                if ((peer & (RingMedium.CLOSED | RingMedium.DEAD)) != 0) {
                    // TCP's first write after the peer's orderly close (every byte of ours read) is taken, its
                    // answer the peer's reset, and the writes after it fail: so an answer the peer wrote before
                    // closing ("503", "too many connections") is still read after the request is sent (it
                    // failed at once until 2026-11-29). A channel's gathering write counts as one write. A peer
                    // that reset or died fails the first write already (a dead end may also be a dropped
                    // pairing, which TCP resets).
                    boolean first = writesAfterPeerGone++ == 0;
                    // (a gathering write is one write: a close that came in its middle is orderly if the peer read
                    // every byte before the write, and any of the write's own; seen in the RDMA VM, where the
                    // close's flag came in the middle of a request's buffers and only the first was taken)
                    long read = medium.consumedByPeer();
                    boolean orderly = (peer & (RingMedium.RESET | RingMedium.DEAD)) == 0
                            && (gathering ? read >= gatherStart && read <= produced : read == produced);
                    if (!orderly || !(first || (gathering && gatheredAfterPeerGone))) {
                        throw writesAfterPeerGone > 1 ? new SocketException("Broken pipe") : peerGone(peer);
                    }
                    if (gathering) gatheredAfterPeerGone = true;
                    // TCP takes that write into its buffers, no more: the rest meets the peer's reset (a 16 MiB
                    // write after the peer's close fails over TCP, a 100 KB one is taken). The ring's capacity
                    // stands for those buffers. All of a write of any size was dropped as "written" until
                    // 2026-11-30 (a blocked-write test saw "wrote everything" where TCP says "Broken pipe").
                    int n = (int) Math.min(len, capacity - takenAfterPeerGone);
                    if (n <= 0) throw new SocketException("Broken pipe");
                    takenAfterPeerGone += n;
                    releaseSent(sent + n);
                    if (advance != null) advance.position(advance.position() + n);
                    written += n;
                    len -= n;
                    if (len == 0 || advance != null) return written; // a channel's write may return short
                    throw new SocketException("Broken pipe");
                }
                if ((peer & RingMedium.INPUT_SHUTDOWN) != 0) {
                    // The peer discards everything it receives (its input shut down), as TCP does: accept the
                    // bytes and drop them.
                    releaseSent(sent + len);
                    if (advance != null) advance.position(advance.position() + len);
                    return written + len;
                }
                // Agrona's headCache: the peer's consumer cursor is re-read only when the cached one
                // says the ring is full, so a stream of small writes does not pull the peer's line
                // over on every write.
                long free = capacity - (produced - consumedCache);
                if (free <= 0) {
                    refreshConsumed();
                    free = capacity - (produced - consumedCache);
                }
                if (free > 0) {
                    int n = (int) Math.min(free, len);
                    if (stallTold) untellStall();
                    if (waiting) {
                        if (slept) wait.slept(wakeLatency); else wait.caught();
                        waiting = false;
                        slept = false;
                    }
                    if (keepWithin > 0) skipIfEmpty(n);
                    copyIn(b, bb, off, n);
                    off += n;
                    len -= n;
                    written += n;
                    if (advance != null) advance.position(advance.position() + n);
                } else if (!block) {
                    return written;
                } else {
                    if (!waiting) {
                        waiting = true;
                        wait.begin(medium);
                        waitBegan = System.nanoTime();
                        readSeen = readProgress();
                        readIdleSince = waitBegan;
                    }
                    if (!slept && wait.idle()) continue;
                    if (slept) {
                        long now = System.nanoTime(); // one clock reading per wake-up, for the stall and the move
                        // A stall (RDMA: the peer learns of this wait only when told) is told only where it matters:
                        // the peer can move its bytes to this end only if it is a socket's writer (then it follows
                        // too) and this end follows (a socket's: it has a TCP stream).
                        if (stallNanos > 0 && !stallTold && now - waitBegan >= stallNanos && tcp != null && medium.peerFollowsTcp()) {
                            stallTold = true;
                            medium.writerStalled(true);
                        }
                        // The move: the ring stayed full since waitBegan (any read by the peer would have made room),
                        // the peer waits to write too, in its ring, or on TCP, where its wait cannot be seen (it
                        // moved), and nothing on this side read for as long: a reader here (its own thread) would
                        // drain the peer's ring, so its writer's wait ends, and both rings are only slow, not stuck
                        // (the RDMA VM's full-duplex stream, its readers descheduled for 10 ms, moved to TCP until
                        // 2026-11-29). The time first: in the warm-up's profile as in the application's, nearly always false.
                        if (now - waitBegan >= SWITCH_AFTER_NANOS && b != null && tcp != null) {
                            long r = readProgress();
                            if (r < 0 || r != readSeen) {
                                readSeen = r;
                                readIdleSince = now;
                            }
                            if (readSeen >= 0 && now - readIdleSince >= SWITCH_AFTER_NANOS
                                    && (medium.peerWriterWaiting() || medium.peerSwitchedAt() >= 0)
                                    && medium.switchToTcp(produced)) {
                                onTcp = true;
                                return written + toTcp(b, off, len);
                            }
                        }
                    }
                    slept = true;
                    interrupted |= sleep();
                    if (interrupted && VirtualThreads.isVirtual(Thread.currentThread())) {
                        closeByInterrupt = true;
                        throw VirtualThreads.closedByInterrupt();
                    }
                }
            }
            return written;
        } finally {
            if (stallTold) untellStall();
            wait.end();
            unlock();
            if (interrupted) Thread.currentThread().interrupt();
            // as the JDK's socket does for a virtual thread: the interrupt closes the socket (lock released first)
            if (closeByInterrupt) VirtualThreads.closeSocket(hooks);
        }
    }

    private void untellStall() {
        stallTold = false;
        medium.writerStalled(false);
    }

    /** After the switch: {@code len} bytes to the TCP stream (the lock held); returns len. */
    private int toTcp(byte[] b, int off, int len) throws IOException {
        OutputStream t = tcp.get();
        if (t == null) throw new SocketException("Socket closed"); // its socket was collected
        t.write(b, off, len);
        releaseSent(sent + len);
        return len;
    }

    private void copyIn(byte[] b, ByteBuffer bb, int off, int n) {
        long p = produced;
        // a long write is published in parts as it is copied (RingMedium.publishStep): a reader waiting
        // awake copies each part out while the next is copied in; the end's publish wakes a sleeper
        int step = medium.publishStep(n);
        int done = 0;
        if (step > 0 && step < n) {
            medium.publishWriteEnd(p + n);
            for (; n - done > step; done += step) {
                copyIn(p + done, b, bb, off + done, step);
                medium.publishProducedPart(p + done + step);
            }
        }
        copyIn(p + done, b, bb, off + done, n - done);
        releaseProduced(p + n);
        medium.publishProduced(p + n);
        releaseSent(sent + n);
    }

    /**
     * Before a write of {@code n} bytes (the lock held): if it would reach past the ring's first {@link
     * #keepWithin} bytes and the ring is empty, its bytes start at the ring's start instead ({@link
     * RingMedium#publishSkipTo}). Whether the ring is empty is looked at once per round of the ring (the
     * peer's credit cursor is a line its reader writes: a look at it on every write would cost a write of
     * small pieces what the cached cursor saves), so a writer the reader does not keep up with goes round
     * the whole ring as before.
     */
    private void skipIfEmpty(int n) throws SocketException {
        long p = produced;
        int pos = (int) (p & mask);
        if (pos == 0 || pos + n <= keepWithin) return;
        if (consumedCache != p) {
            long round = p & ~(long) mask;
            if (round == skipLookedAt) return;
            skipLookedAt = round;
            refreshConsumed();
            if (consumedCache != p) return;
        }
        long to = (p | mask) + 1;
        medium.publishSkipTo(to);
        skippedTo = to;
        consumedCache = to;
        releaseProduced(to);
    }

    /** {@link #consumedCache} read again (the lock held). */
    private void refreshConsumed() throws SocketException {
        long read = consumedByPeer();
        // a faulty peer's read cursor beyond what was written: broken, not a copy past the ring
        if (read - produced > 0) {
            throw new SocketException("Connection reset by peer: its read cursor is " + (read - produced)
                    + " bytes beyond what was written");
        }
        consumedCache = read;
    }

    /** The peer's credits, or the last cursor skipped to where they have not reached it yet. */
    private long consumedByPeer() {
        return Math.max(medium.consumedByPeer(), skippedTo);
    }

    /** {@code n} bytes into the ring at cursor {@code at}, in two copies where they wrap. */
    private void copyIn(long at, byte[] b, ByteBuffer bb, int off, int n) {
        int pos = mask >= 0 ? (int) (at & mask) : (int) (at % capacity);
        int first = Math.min(n, capacity - pos);
        if (b != null) {
            medium.writeRing(pos, b, off, first);
            if (first < n) medium.writeRing(0, b, off + first, n - first);
        } else {
            medium.writeRing(pos, bb, off, first);
            if (first < n) medium.writeRing(0, bb, off + first, n - first);
        }
    }

    /**
     * Whether a write would return at once having written something or failed: what {@code OP_WRITE}
     * means (room in the peer's ring, or the peer gone or discarding, or this side shut or closed).
     * Any thread; a snapshot.
     */
    public boolean writable() {
        return closed || outputShutdown || (medium.peerFlags() & STOP_FLAGS) != 0
                || acquireProduced() - consumedByPeer() < capacity;
    }

    private void ensureWritable() throws SocketException {
        if (closed) throw new SocketException("Socket closed");
        if (outputShutdown) throw new SocketException("Socket output is shutdown");
    }

    private static SocketException peerGone(int peerFlags) {
        return (peerFlags & (RingMedium.DEAD | RingMedium.RESET)) != 0
                ? new SocketException("Connection reset by peer")
                : new SocketException("Broken pipe");
    }

    /** Sleeps until credits, a flag, a local close or shutdown; returns whether an interrupt was swallowed. */
    private boolean sleep() {
        waiter = Thread.currentThread();
        long sleptAt = System.nanoTime();
        medium.announceWriterWaiting(true);
        try {
            if (closed || outputShutdown
                    || produced - consumedByPeer() < capacity
                    || (medium.peerFlags() & STOP_FLAGS) != 0) {
                return false;
            }
            // Timed only while the peer follows and its writer waits too (or moved): then one of the two may move,
            // and must look again (a blocked writer woke every 10 ms for nothing before; found in review,
            // 2026-11-29). Both set their waiting bit with a full fence before this, so of two writers starting
            // to wait at once at least one sees the other. On a medium whose peer learns of this wait only when
            // told (RDMA), also in slices until it was told. The first test is the medium's, not whether this
            // stream has a TCP stream: the warm-up's have none, and a branch its profile never saw was a trap.
            boolean timed = switchable && ((stallNanos > 0 && !stallTold && tcp != null && medium.peerFollowsTcp())
                    || (medium.peerFollowsTcp() && (medium.peerWriterWaiting() || medium.peerSwitchedAt() >= 0)));
            long slice = stallNanos > 0 && !stallTold ? stallNanos : SWITCH_AFTER_NANOS;
            if (!timed) {
                if (!medium.awaitWriter()) LockSupport.park(this);
            } else if (!medium.awaitWriter(slice)) {
                LockSupport.parkNanos(this, slice); // looks again whether both ends wait
            }
            return Thread.interrupted();
        } finally {
            medium.announceWriterWaiting(false);
            waiter = null;
            wakeLatency = medium.wakeLatencyNanos(false, sleptAt, System.nanoTime());
        }
    }

    /**
     * Nothing to do: every write is already visible to the peer. Never throws, as a TCP socket's stream
     * (the JDK's inherits OutputStream's): a wrapper flushed as it closes after the socket (Thrift's
     * transport, a BufferedOutputStream) must not fail there.
     */
    @Override
    public void flush() {
    }

    /** Closes the whole socket, as closing a socket's stream does on TCP. */
    @Override
    public void close() throws IOException {
        hooks.closeSocket();
    }

    /** Bytes accepted from the application so far. */
    public long bytesSent() {
        return acquireSent();
    }

    /**
     * Half-close of the send side: waits for a write in progress to leave (a blocked one is woken and
     * fails), then publishes {@link RingMedium#OUTPUT_SHUTDOWN} after the final cursor. Idempotent.
     */
    public void shutdown() {
        if (outputShutdown) return;
        outputShutdown = true;
        wake();
        lock.lock();
        try {
            if (!closed) medium.publishFlags(RingMedium.OUTPUT_SHUTDOWN);
        } finally {
            unlock();
        }
    }

    public boolean isShutdown() {
        return outputShutdown;
    }

    /** Local close: a blocked or later write throws {@code SocketException("Socket closed")}. */
    public void closeLocal() {
        closed = true;
        wake();
    }

    /**
     * After {@link #closeLocal}: waits until no write is in progress (the one under way, woken by the
     * close, finishes the part it is copying and leaves; a later one fails before it touches the ring),
     * at most {@code timeoutNanos}; false if one is still inside then. So every byte a write counted as
     * taken is published before what the caller publishes next: the CLOSED flag, after which the peer
     * reads what is there and then EOF (as TCP's close waits for a write under way, and sends its FIN after
     * the bytes). Returns at once on a thread inside a write itself.
     */
    boolean awaitWritesLeft(long timeoutNanos) {
        // nobody inside: no write to wait for (the common close, without the try-lock's thirty calls interpreted)
        if (!lock.isLocked() || lock.isHeldByCurrentThread()) return true;
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    if (!lock.tryLock(Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS)) return false;
                    lock.unlock(); // the plain unlock: no idle action is set yet
                    return true;
                } catch (InterruptedException e) {
                    interrupted = true; // the close goes on; the flag is restored below
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /**
     * After {@link #closeLocal}: runs {@code action} once no write is in progress, so that none will touch
     * the ring again (a later one fails before it does): now, on this thread, or when the write in progress
     * leaves, on its thread (it was woken by the close). Runs it at most once.
     */
    void whenIdle(Runnable action) {
        onIdle.set(action, lock);
    }

    /** Releases the lock; the last write to leave a closed stream runs {@link #whenIdle}'s action. */
    private void unlock() {
        lock.unlock();
        if (closed && onIdle.isPending()) onIdle.runIfIdle(lock);
    }

    /** Wakes the writer if it sleeps; safe to call at any time from any thread. */
    public void wake() {
        medium.wakeLocalWriter();
        Thread t = waiter;
        if (t != null) LockSupport.unpark(t);
    }

    /** A release store of {@code sent} (through {@link MemoryAccess} where it is fast from a cold JVM). */
    private void releaseSent(long value) {
        if (MemoryAccess.FAST) MemoryAccess.putLongRelease(this, SENT_OFFSET, value);
        else SENT.setRelease(this, value);
    }

    /** An acquire load of {@code sent}. */
    private long acquireSent() {
        return MemoryAccess.FAST ? MemoryAccess.getLongAcquire(this, SENT_OFFSET) : (long) SENT.getAcquire(this);
    }

    /** A release store of {@code produced} (through {@link MemoryAccess} where it is fast from a cold JVM). */
    private void releaseProduced(long value) {
        if (MemoryAccess.FAST) MemoryAccess.putLongRelease(this, PRODUCED_OFFSET, value);
        else PRODUCED.setRelease(this, value);
    }

    /**
     * Whether the peer's end took every byte this stream wrote into its ring: false when it closed or died
     * with some unread, which TCP's kernel answers with a reset. Any thread; a snapshot.
     */
    public boolean peerReadAll() {
        return medium.consumedByPeer() == acquireProduced();
    }

    /**
     * Tells this stream how to see this end's reads ({@link RingInputStream#readProgress}): a writer moves
     * to TCP only while nothing here reads. Unset: as if nothing ever read (a stream made without its reader).
     */
    void ownReader(RingInputStream reader) {
        this.ownReader = reader;
    }

    private long readProgress() {
        RingInputStream r = ownReader;
        return r == null ? 0 : r.readProgress();
    }

    /**
     * For a channel's gathering write, which is one write over TCP: the buffers after the first that the
     * peer's orderly close let through are let through too ({@code true} before, {@code false} after).
     */
    public void gathering(boolean on) {
        lock.lock();
        try {
            gathering = on;
            gatherStart = produced;
            if (!on) gatheredAfterPeerGone = false;
        } finally {
            unlock(); // the stream's own: a close meanwhile left its idle action to whoever held the lock
        }
    }

    /** An acquire load of {@code produced}. */
    private long acquireProduced() {
        return MemoryAccess.FAST ? MemoryAccess.getLongAcquire(this, PRODUCED_OFFSET) : (long) PRODUCED.getAcquire(this);
    }
}
