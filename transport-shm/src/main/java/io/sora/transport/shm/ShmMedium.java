package io.sora.transport.shm;


import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.DirectWords;
import io.sora.transport.Futex;
import io.sora.transport.NativeFiles;
import io.sora.transport.RingMedium;
import io.sora.transport.VirtualThreads;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The shm {@link RingMedium}: rings, cursors and flags in a mapped {@link Segment}, liveness on the
 * Unix-domain control channel. Cursors and flags use acquire/release (and a full fence between a
 * publish and the look at the peer's waiting word); data moves with absolute bulk get/put, so nothing
 * on the data path allocates.
 *
 * <p>Sleeping and waking, directly: a thread about to sleep sets {@link Segment#SLEEP_FUTEX} in
 * its waiting word (a bit set: a selector armed on the direction has a bit of its own), fences,
 * re-checks, and sleeps in a futex on that word. The peer, after a publish and a fence, finds the bit
 * set, clears it and wakes the futex: one system call in the
 * peer's thread and the kernel runs the sleeper, no thread in between (the earlier design woke a
 * JVM-wide doorbell thread that then unparked the sleeper: two thread switches per wake-up, about
 * 18 µs here). Clearing the bit is what makes a wake-up that comes before the sleeper enters the kernel
 * count: the futex then sees a word that differs and returns at once. Futexes are used when both
 * sides have sora's native library ({@link Segment#CAP_FUTEX}) and the sleeper is a platform thread;
 * otherwise (a virtual thread, which must not pin its carrier in the kernel, or no library) it parks
 * with {@link Segment#SLEEP_BELL} and the peer sends a one-byte doorbell on the control channel,
 * which the JVM's doorbell thread turns into an unpark.
 *
 * <p>Doorbells go out on a non-blocking channel: if the socket buffer is full, the peer already has
 * unread doorbells and will wake anyway, so a short write loses nothing. EOF on the channel means the
 * peer is gone: closed if its CLOSED flag is set, otherwise dead ({@link #DEAD}).
 *
 * <p><b>Kept for the next connection.</b> Making a connection's channel and segment (a Unix-domain
 * connection accepted and registered, a file created, sized, mapped by both processes, unlinked; all of
 * it undone at the close) was most of a pairing's cost. Where both ends have a {@link Keeper} (the
 * doorbell loop in its epoll mode, no selector ever on the connection), a close does not end the
 * channel: each end, once closed and once none of its threads can touch the segment any more
 * ({@link #ringsDone}), hands channel and segment to its keeper (the client's pool of kept channels per
 * listener, the listener's kept channels) and then sets its bit in the segment's kept word
 * ({@link Segment#OFF_KEPT}); the channel stays in the doorbell loop's watch with this medium as its
 * handler, which reports the channel's end (the peer closed its half or died: dropped). The client takes
 * a kept channel only once both bits are set, and the next connection is agreed in the segment
 * ({@link NextPairing}); its medium replaces this one as the channel's handler
 * ({@link DoorbellLoop#rebind}). No frame, no channel, no file, no mapping, no change of the epoll set.
 * Nothing of the old connection can reach the new one: each end writes the segment only until it sets
 * its bit, the client zeroes the connection's fields before it announces the next one, a closed kept
 * medium wakes no thread of its own, and an end that cannot keep (a selector used it, its pool is full,
 * its peer died) closes the channel instead, and the other end then drops its half.
 */
final class ShmMedium implements RingMedium, DoorbellLoop.Handler {
    /** Server side, before COMMIT: told when the client commits or gives up. */
    interface CommitListener {
        void committed();

        void aborted(String reason);
    }

    private final long id;
    private final ByteBuffer buf;
    /** The segment's cursors, flags and waiting words ({@link Segment#words}). */
    private final DirectWords words;
    private final SocketChannel channel;
    private final Tracer tracer;
    private final int recvBase;
    private final int recvCapacity;
    private final int sendBase;
    private final int sendCapacity;
    private final int offPeerProduced;
    private final int offMyConsumed;
    private final int offMyProduced;
    private final int offPeerConsumed;
    private final int offMyState;
    private final int offPeerState;
    private final int myReaderWaiting;
    private final int myWriterWaiting;
    private final int peerReaderWaiting;
    private final int peerWriterWaiting;
    private final boolean futex;
    /** How the local reader / writer sleeps now (a {@code SLEEP_*} value); each written by its own thread. */
    private int readerSleep;
    private int writerSleep;
    /** Sleeps so far, each counter written by its own thread: reader futex, reader bell, writer futex, writer bell. */
    private long readerFutexSleeps;
    private long readerBellSleeps;
    private long writerFutexSleeps;
    private long writerBellSleeps;
    /**
     * The data path's bells, each used by its side's thread (reader, writer) and made at its first bell:
     * a connection whose threads sleep in futexes rings none (two direct buffers, their cleaners and
     * their frees at a collection per connection and side, for nothing).
     */
    private ByteBuffer readerBell;
    private ByteBuffer writerBell;
    /** Server, before COMMIT: the frame read so far (null where no COMMIT comes: client, kept segment). */
    private final ByteBuffer commitFrame;
    private volatile CommitListener commitListener;
    private volatile Waker waker;
    /** Non-null while a selector reads the bells and the doorbell thread watches only for hang-up. */
    private volatile BellControl muteControl;
    private volatile BellControl bellControl;
    private volatile boolean peerDead;
    private volatile boolean closed;
    private final Segment segment;
    /** Where channel and segment go once both ends are done; null: they end with the connection. */
    private volatile Keeper keeper;
    /** A selector may have touched the segment (or will): never kept. */
    private volatile boolean neverKeep;
    /** Decided at the close: the channel stays open, kept for the next connection. */
    private volatile boolean keeping;
    /** The next connection's medium on this kept channel ({@link DoorbellLoop#rebind}); null until then. */
    volatile ShmMedium successor;
    /** Which bit of {@link Segment#OFF_KEPT} this end sets. */
    private final int keptBit;

    /** Takes a closed connection's channel and segment for the next connection (see the class comment). */
    interface Keeper {
        /**
         * This end is done with the segment (on the thread that left it last): true if channel and
         * segment are taken, false to have the channel closed.
         */
        boolean keep(SocketChannel channel, Segment segment);

        /** A kept channel ended (the peer closed its half or died) and is closed: whatever was kept with it goes. */
        default void dropped(SocketChannel channel) {
        }

        /** Bytes on a kept channel between connections: the client's kick ({@link NextPairing}), or a stale bell. */
        default void kicked(SocketChannel channel) {
        }
    }

    /** Whether this medium's sleepers wait in a futex (woken without the channel); false: doorbells. */
    boolean futexMode() {
        return futex;
    }

    /**
     * @param server         which end this is
     * @param commitListener server only: waits for COMMIT first; null on the client
     * @param useFutex       false: sleep with doorbells even where futexes are available (tests)
     */
    /** This end is the server's (for the trace). */
    private final boolean server;

    ShmMedium(long id, Segment segment, boolean server, SocketChannel channel, Tracer tracer,
              CommitListener commitListener, boolean useFutex) {
        this.id = id;
        this.segment = segment;
        this.buf = segment.buffer;
        this.words = segment.words;
        this.channel = channel;
        this.tracer = tracer;
        this.commitListener = commitListener;
        this.commitFrame = commitListener == null ? null : ByteBuffer.allocate(Wire.COMMIT_FRAME_SIZE);
        int c2s = Segment.HEADER_SIZE;
        int s2c = Segment.HEADER_SIZE + segment.ringC2S;
        if (server) {
            recvBase = c2s;
            recvCapacity = segment.ringC2S;
            sendBase = s2c;
            sendCapacity = segment.ringS2C;
            offPeerProduced = Segment.OFF_C2S_PRODUCED;
            offMyConsumed = Segment.OFF_C2S_CONSUMED;
            offMyProduced = Segment.OFF_S2C_PRODUCED;
            offPeerConsumed = Segment.OFF_S2C_CONSUMED;
            offMyState = Segment.OFF_SERVER_STATE;
            offPeerState = Segment.OFF_CLIENT_STATE;
            myReaderWaiting = Segment.OFF_C2S_READER_WAITING;
            peerReaderWaiting = Segment.OFF_S2C_READER_WAITING;
        } else {
            recvBase = s2c;
            recvCapacity = segment.ringS2C;
            sendBase = c2s;
            sendCapacity = segment.ringC2S;
            offPeerProduced = Segment.OFF_S2C_PRODUCED;
            offMyConsumed = Segment.OFF_S2C_CONSUMED;
            offMyProduced = Segment.OFF_C2S_PRODUCED;
            offPeerConsumed = Segment.OFF_C2S_CONSUMED;
            offMyState = Segment.OFF_CLIENT_STATE;
            offPeerState = Segment.OFF_SERVER_STATE;
            myReaderWaiting = Segment.OFF_S2C_READER_WAITING;
            peerReaderWaiting = Segment.OFF_C2S_READER_WAITING;
        }
        // a writer's waiting word sits on its producer cursor's line, a reader's on a line of its own (see Segment)
        myWriterWaiting = offMyProduced + Segment.WAITING;
        peerWriterWaiting = offPeerProduced + Segment.WAITING;
        keptBit = server ? Segment.KEPT_SERVER : Segment.KEPT_CLIENT;
        this.server = server;
        futex = useFutex && Futex.isAvailable();
        words.setIntRelease(offMyState + Segment.CAPS, futex ? Segment.CAP_FUTEX : 0);
    }

    SocketChannel channel() {
        return channel;
    }

    /** Keeps channel and segment after the close with {@code keeper} (see the class comment); before any use. */
    void keepWith(Keeper keeper) {
        if (DoorbellLoop.NATIVE && channel != null) this.keeper = keeper;
    }

    /** Every channel a selector can drive says so at its creation (PairedChannel), before any selector call. */
    @Override
    public void neverKeep() {
        neverKeep = true;
    }

    /** Every selector let go of this connection as its channel closes (PairedChannel): kept as a socket's is. */
    @Override
    public void allowKeep() {
        neverKeep = false;
    }

    /** Whether the close keeps the channel open for the next connection. */
    private boolean keepable() {
        return keeper != null && !neverKeep && !peerDead && channel != null && channel.isOpen();
    }

    @Override
    public void setWaker(Waker waker) {
        this.waker = waker;
    }

    @Override
    public int receiveCapacity() {
        return recvCapacity;
    }

    @Override
    public long producedByPeer() {
        return words.getLongAcquire(offPeerProduced);
    }

    @Override
    public void readRing(int ringOffset, byte[] dst, int dstOffset, int len) {
        words.copyTo(recvBase + ringOffset, dst, dstOffset, len);
    }

    @Override
    public void readRing(int ringOffset, ByteBuffer dst, int dstIndex, int len) {
        dst.put(dstIndex, buf, recvBase + ringOffset, len);
    }

    @Override
    public void writeRing(int ringOffset, ByteBuffer src, int srcIndex, int len) {
        buf.put(sendBase + ringOffset, src, srcIndex, len);
    }

    @Override
    public void publishConsumed(long consumed) {
        words.setLongRelease(offMyConsumed, consumed);
        VarHandle.fullFence();
        if (words.getIntAcquire(peerWriterWaiting) != 0) wakePeer(peerWriterWaiting, false);
    }

    @Override
    public int sendCapacity() {
        return sendCapacity;
    }

    @Override
    public long consumedByPeer() {
        return words.getLongAcquire(offPeerConsumed);
    }

    @Override
    public void writeRing(int ringOffset, byte[] src, int srcOffset, int len) {
        words.copyFrom(src, srcOffset, sendBase + ringOffset, len);
    }

    @Override
    public void publishProduced(long produced) {
        words.setLongRelease(offMyProduced, produced);
        VarHandle.fullFence();
        if (words.getIntAcquire(peerReaderWaiting) != 0) wakePeer(peerReaderWaiting, true);
    }

    /**
     * Writes of 16 KiB and more publish every eighth of themselves, at least every 8 KiB: a reader spinning
     * for the message copies the first part out of the ring (from the writer's cache) while the writer
     * copies the next in, instead of both copies one after the other. Measured 2026-11-27, pinned apart
     * (docs/shm.md, "Data path"): round trips of 16 KiB 6.3-6.8 us against 7.5-8.2 in one part, 64 KiB
     * 19.9-22.5 against 27.5-30.1, streaming 64 KiB writes 1.5x the throughput. Not below 16 KiB: parts of
     * 2 KiB from 4 KiB made 4 and 16 KiB streaming writes 22-28 % slower (each part's publish one more
     * cache line handed between the CPUs while the reader spins on it) and gained a 4 KiB round trip at
     * most 5 %, though two JVMs copying through a bare mapping gained 20 % that way (1.81-1.90 us against
     * 2.25-2.32): sora's reads and writes around the copies leave less to overlap.
     */
    @Override
    public int publishStep(int n) {
        return n < PUBLISH_PARTS_FROM ? 0 : Math.max(PUBLISH_PARTS_FROM / 2, n >>> 3);
    }

    static final int PUBLISH_PARTS_FROM = Integer.getInteger("sora.shm.publishPartsFrom", 16384);

    @Override
    public void publishProducedPart(long produced) {
        words.setLongRelease(offMyProduced, produced);
    }

    @Override
    public void publishWriteEnd(long end) {
        words.setLongRelease(offMyProduced + Segment.WRITE_END, end);
    }

    @Override
    public long peerWriteEnd() {
        return words.getLongAcquire(offPeerProduced + Segment.WRITE_END);
    }

    /**
     * Writes keep to the send ring's first {@value #KEEP_WITHIN_DEFAULT} bytes while the peer keeps up
     * ({@code -Dsora.shm.keepWithin=BYTES}, rounded down to a power of two; 0: round the whole ring): a message's bytes then
     * land on cache lines both CPUs touched a message or two ago, not on the next stretch of a 64 KiB ring,
     * which is out of the first-level cache by the time the writer comes round to it again (two 64 KiB rings
     * and the application's buffers are more than its 32 KiB). Measured 2026-11-30 (4 KiB ping-pong pinned
     * apart, 100,000 round trips, fresh JVM pairs, six alternations): 1.03-1.28 us against 1.32-1.56 with
     * 64 KiB rings gone round whole; 8 KiB did better than 4 or 16; docs/shm.md, "Data path".
     */
    @Override
    public int keepWithin() {
        return KEEP_WITHIN;
    }

    static final int KEEP_WITHIN_DEFAULT = 8192;
    static final int KEEP_WITHIN = keepWithinProperty();

    /** The property, rounded down to a power of two (ring offsets are masks); 0 or less: off. */
    private static int keepWithinProperty() {
        int v = Integer.getInteger("sora.shm.keepWithin", KEEP_WITHIN_DEFAULT);
        return v > 0 ? Integer.highestOneBit(v) : 0;
    }

    @Override
    public void publishSkipTo(long to) {
        words.setLongRelease(offMyProduced + Segment.SKIP_TO, to);
    }

    @Override
    public long peerSkipTo() {
        return words.getLongAcquire(offPeerProduced + Segment.SKIP_TO);
    }

    /** The peer runs this medium too (the segment's version says so); its writer skips where its ring is larger. */
    @Override
    public boolean peerMaySkip() {
        return true;
    }

    @Override
    public void publishCpu(int cpu) {
        int v = cpu + 1;
        // only a change is written: the peer's waits read this line for the flags too
        if (words.getIntOpaque(offMyState + Segment.CPU) != v) words.setIntOpaque(offMyState + Segment.CPU, v);
    }

    @Override
    public int peerCpu() {
        return words.getIntOpaque(offPeerState + Segment.CPU) - 1;
    }

    @Override
    public int peerFlags() {
        return words.getIntAcquire(offPeerState + Segment.FLAGS) | (peerDead ? DEAD : 0);
    }

    @Override
    public void publishFlags(int flags) {
        words.getAndBitwiseOrInt(offMyState + Segment.FLAGS, flags & (OUTPUT_SHUTDOWN | INPUT_SHUTDOWN | CLOSED | RESET));
        VarHandle.fullFence();
        // A peer that closed its end has no thread left waiting on this connection, nor a channel to ring.
        if ((words.getIntAcquire(offPeerState + Segment.FLAGS) & CLOSED) != 0) return;
        // Rare (half-close, close): wake both of the peer's threads, whichever way they sleep.
        if (futex) {
            wakeFutex(peerReaderWaiting);
            wakeFutex(peerWriterWaiting);
        }
        // A close shuts the control channel right after this (close()): that EOF wakes the peer's
        // doorbell thread or selector as a doorbell would, so a close rings no bell of its own (one
        // wake-up of the peer's doorbell thread less per connection). A half-close keeps the channel:
        // it rings, with a fresh buffer, which keeps this callable from any thread without sharing the
        // data path's bells.
        if ((flags & CLOSED) == 0) {
            ring(ByteBuffer.allocate(1));
        } else if (keepable()) {
            // the channel stays open: a peer thread parked for a bell (a virtual thread) needs one
            if ((words.getIntAcquire(peerReaderWaiting) & Segment.RING_BITS) != 0
                    || (words.getIntAcquire(peerWriterWaiting) & Segment.RING_BITS) != 0) {
                ring(ByteBuffer.allocate(1));
            }
        }
    }

    /** The peer's thread sleeping on {@code word} must see what was just published (after a full fence). */
    private void wakePeer(int word, boolean byWriter) {
        // a futex sleeper and a selector (or a parked stream thread) may both wait: each is woken its way
        if ((wakeFutex(word) & Segment.RING_BITS) == 0) return;
        ByteBuffer bell;
        if (byWriter) {
            bell = writerBell;
            if (bell == null) writerBell = bell = ByteBuffer.allocateDirect(1);
        } else {
            bell = readerBell;
            if (bell == null) readerBell = bell = ByteBuffer.allocateDirect(1);
        }
        ring(bell);
    }

    /**
     * Clears a futex sleeper's bit and wakes it, if the word has that bit (the waker that clears it wakes:
     * a bit already clear means another waker or the sleeper itself did); returns the word as last seen,
     * whose other bits say who else waits (to be rung for).
     */
    private int wakeFutex(int word) {
        int w = words.getIntAcquire(word);
        while ((w & Segment.SLEEP_FUTEX) != 0) {
            int was = words.compareAndExchangeInt(word, w, w & ~Segment.SLEEP_FUTEX);
            if (was == w) {
                Futex.wake(buf, word, 1);
                return w;
            }
            w = was;
        }
        return w;
    }

    private int sleepMode() {
        boolean peerCan = (words.getIntAcquire(offPeerState + Segment.CAPS) & Segment.CAP_FUTEX) != 0;
        return futex && peerCan && !VirtualThreads.isVirtual(Thread.currentThread()) ? Segment.SLEEP_FUTEX : Segment.SLEEP_BELL;
    }

    /** Whether the peer's reader announced that it waits (the warm-up's late writer: {@link DataPathWarmup}). */
    boolean peerReaderAnnounced() {
        return words.getIntAcquire(peerReaderWaiting) != 0;
    }

    /** Whether the peer's writer announced that it waits for room (the warm-up's late reader). */
    boolean peerWriterAnnounced() {
        return words.getIntAcquire(peerWriterWaiting) != 0;
    }

    @Override
    public void announceReaderWaiting(boolean waiting) {
        if (waiting) {
            readerSleep = sleepMode();
            words.getAndBitwiseOrInt(myReaderWaiting, readerSleep); // a full fence: the re-check comes after
        } else {
            words.getAndBitwiseAndInt(myReaderWaiting, ~readerSleep); // its own bit only: a selector's stays
        }
    }

    @Override
    public void announceWriterWaiting(boolean waiting) {
        if (waiting) {
            writerSleep = sleepMode();
            words.getAndBitwiseOrInt(myWriterWaiting, writerSleep);
        } else {
            words.getAndBitwiseAndInt(myWriterWaiting, ~writerSleep);
        }
    }

    @Override
    public java.nio.channels.SelectableChannel bellChannel() {
        return channel;
    }

    @Override
    public int whileBellOpen(java.util.function.IntSupplier action) {
        return channel == null ? -1 : DoorbellLoop.get().whileOpen(channel, action);
    }

    @Override
    public java.nio.channels.Selector bellWatcher() {
        return channel == null ? null : DoorbellLoop.get().selector();
    }

    @Override
    public void muteBell(boolean mute, BellControl control) {
        if (channel == null) return;
        bellControl = control;
        muteControl = mute ? control : null;
        DoorbellLoop.get().syncMute(channel, this);
    }

    /** What changes the doorbell loop's registration (the last one given); null if never muted. */
    BellControl bellControl() {
        return bellControl;
    }

    @Override
    public boolean bellMuted() {
        return muteControl != null;
    }

    /** Before a thread sleeps for a bell: the doorbell thread must read the bells again. */
    private void unmuteBell() {
        BellControl c = muteControl;
        if (c != null) muteBell(false, c);
    }

    @Override
    public boolean drainBell(ByteBuffer scratch) {
        // bounded: a peer ringing without pause is read again at the next wake-up
        for (int i = 0; i < 16; i++) {
            scratch.clear();
            if (!onReadable(channel, scratch)) return false;
            // A read that did not fill the buffer emptied the socket: reading again would only return
            // nothing (one spare system call per wake-up, measured: a read and an EAGAIN read per
            // message at each end of a Netty echo). A bell arriving after this read is a new
            // edge of the selector's edge-triggered entry, so nothing is left unseen.
            if (scratch.hasRemaining()) return true;
        }
        return true;
    }

    @Override
    public void markReadsThroughSelector() {
        if (words.getIntOpaque(offMyState + Segment.MODE) == 0) {
            words.setIntRelease(offMyState + Segment.MODE, Segment.MODE_SELECTOR);
        }
    }

    @Override
    public boolean peerReadsThroughSelector() {
        return (words.getIntOpaque(offPeerState + Segment.MODE) & Segment.MODE_SELECTOR) != 0;
    }

    /** A selector waits: the peer must ring the doorbell (a futex wake would reach no one). */
    @Override
    public void armReaderWaker(boolean armed) {
        // Its own bit, set and cleared (each a full fence): a stream thread asleep on this word (its key
        // cancelled, the channel made blocking) keeps its mark. A plain store of 0, then a compare-and-set
        // of the bell value, lost a futex sleeper's and then a parked one's wake-up (bugs 30 and 37)
        if (armed) words.getAndBitwiseOrInt(myReaderWaiting, Segment.SLEEP_SELECTOR);
        else words.getAndBitwiseAndInt(myReaderWaiting, ~Segment.SLEEP_SELECTOR);
    }

    @Override
    public void armWriterWaker(boolean armed) {
        if (armed) words.getAndBitwiseOrInt(myWriterWaiting, Segment.SLEEP_SELECTOR); // as the reader's
        else words.getAndBitwiseAndInt(myWriterWaiting, ~Segment.SLEEP_SELECTOR);
    }

    @Override
    public boolean awaitReader(long timeoutNanos) {
        if (readerSleep != Segment.SLEEP_FUTEX) {
            unmuteBell();
            readerBellSleeps++;
            return false;
        }
        readerFutexSleeps++;
        // the word as it is (a selector's bit may be set too); cleared bit: woken already. A change of
        // another bit meanwhile ends the wait at once, and the caller looks at the ring again
        int w = words.getIntAcquire(myReaderWaiting);
        if ((w & Segment.SLEEP_FUTEX) != 0) Futex.await(buf, myReaderWaiting, w, timeoutNanos);
        return true;
    }

    @Override
    public boolean awaitWriter(long timeoutNanos) {
        if (writerSleep != Segment.SLEEP_FUTEX) {
            unmuteBell();
            writerBellSleeps++;
            return false;
        }
        writerFutexSleeps++;
        int w = words.getIntAcquire(myWriterWaiting); // as the reader's
        if ((w & Segment.SLEEP_FUTEX) != 0) Futex.await(buf, myWriterWaiting, w, timeoutNanos);
        return true;
    }

    @Override
    public boolean carriesTcpSwitch() {
        return true;
    }

    @Override
    public void offerTcpFollow() {
        words.getAndBitwiseOrInt(offMyState + Segment.CAPS, Segment.CAP_TCP_FOLLOW);
    }

    @Override
    public boolean peerFollowsTcp() {
        return (words.getIntAcquire(offPeerState + Segment.CAPS) & Segment.CAP_TCP_FOLLOW) != 0;
    }

    @Override
    public boolean switchToTcp(long at) {
        if (!peerFollowsTcp()) return false;
        words.setLongRelease(offMyProduced + Segment.SWITCHED_AT, at + 1);
        VarHandle.fullFence();
        // A peer that closed meanwhile reads nothing more, and one closed while its application had not taken
        // both streams (a detach's cut) must not find this end's bytes on TCP without those before them: after
        // its CLOSED (a full fence) it looks at this word, after this word (the fence above) this looks at its
        // flags, so one of the two sees the other (the cut then resets the socket; PathRecorder.handOver)
        if (peerDead || (words.getIntAcquire(offPeerState + Segment.FLAGS) & CLOSED) != 0) {
            words.setLongRelease(offMyProduced + Segment.SWITCHED_AT, 0);
            return false;
        }
        // a reader asleep on an empty ring must look again: its next bytes are on TCP now; and a writer of the
        // peer asleep on its full ring (it slept without a bound, this end's writer not waiting then: see
        // RingOutputStream.sleep) must look again too, as it may now have to move as well: this end's bytes
        // go where the peer, blocked writing, does not read (FullRingsBothWaysIT hung without)
        if (words.getIntAcquire(peerReaderWaiting) != 0) wakePeer(peerReaderWaiting, true);
        if (words.getIntAcquire(peerWriterWaiting) != 0) wakePeer(peerWriterWaiting, false);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_TCP_SWITCH, id, "shm", io.sora.transport.RingOutputStream.SWITCH_REASON,
                    (server ? "server" : "client") + " to peer from byte " + at);
        }
        return true;
    }

    @Override
    public long peerSwitchedAt() {
        return words.getLongAcquire(offPeerProduced + Segment.SWITCHED_AT) - 1;
    }

    @Override
    public boolean peerWriterWaiting() {
        return words.getIntAcquire(peerWriterWaiting) != 0;
    }

    @Override
    public boolean awaitWriter() {
        return awaitWriter(0); // no bound
    }

    /**
     * How often the local threads slept so far, by mechanism: {reader in a futex, reader parked for a
     * doorbell, writer in a futex, writer parked}. Exact once those threads are done (tests, diagnostics).
     */
    long[] sleeps() {
        return new long[] {readerFutexSleeps, readerBellSleeps, writerFutexSleeps, writerBellSleeps};
    }

    @Override
    public void wakeLocalReader() {
        if (futex) wakeFutex(myReaderWaiting);
    }

    @Override
    public void wakeLocalWriter() {
        if (futex) wakeFutex(myWriterWaiting);
    }

    private void ring(ByteBuffer bell) {
        if (closed || channel == null) return; // no channel: the in-process warm-up (DataPathWarmup)
        try {
            bell.clear();
            channel.write(bell);
        } catch (IOException e) {
            // The peer is gone or we closed: the EOF path (or our own close) reports it.
        }
    }

    /** Doorbell-thread side: doorbells wake both local threads; EOF marks the peer gone. */
    @Override
    public boolean onReadable(SocketChannel ch, ByteBuffer scratch) {
        if (closed && !keeping) return false; // our own close: nothing to report
        // closed after the peer's end was seen (by the doorbell thread, or a selector reading the bells):
        // reported once
        if (!ch.isOpen()) return false;
        int n;
        try {
            n = ch.read(scratch);
        } catch (IOException e) {
            n = -1;
        }
        CommitListener pending = commitListener;
        if (pending != null) return onPreCommit(pending, scratch, n);
        if (closed) return onKept(ch, n); // keeping: between connections
        if (n >= 0) {
            if (n > 0) wakeBoth();
            return true;
        }
        peerGone();
        return false;
    }

    /**
     * On the doorbell thread, closed and kept: what the channel carries between connections. A medium that
     * replaced this one as its handler while this call was under way gets the wake-up of what was read
     * (its end of file it reads itself: the channel stays readable). The end of file before that: the
     * peer closed its half instead of keeping it, or died, and this half goes too. Bytes: the client's
     * kick, or a stale bell of the old connection (the keeper looks; a stale bell costs it a look).
     */
    private boolean onKept(SocketChannel ch, int n) {
        ShmMedium next = successor;
        if (next != null) {
            if (n > 0) next.wakeBoth();
            return true;
        }
        if (n < 0) {
            if (DoorbellLoop.get().closeIfHandler(ch, this)) {
                keeper.dropped(ch);
                return false;
            }
            return true; // replaced meanwhile: the next connection's medium reads the end itself
        }
        if (n > 0) keeper.kicked(ch);
        return true;
    }

    /**
     * Server, before COMMIT, on a thread other than the doorbell thread (the accepting thread, or the
     * listener's sweep), for a channel the doorbell loop does not watch yet: reads at most what is left
     * of the COMMIT frame, never past it (bytes after it, bells or the end, are the doorbell loop's), and
     * tells the listener of COMMIT, of a bad frame, or of the client's leaving. Without blocking; the
     * caller serialises calls. Returns false while the COMMIT is not complete.
     */
    boolean readCommit() {
        CommitListener pending = commitListener;
        if (pending == null) return true;
        ByteBuffer part = ByteBuffer.allocate(commitFrame.remaining());
        int n;
        try {
            n = channel.read(part);
        } catch (IOException e) {
            n = -1; // closed under us (released by an abort), or the client's end reset
        }
        if (n == 0) return false;
        onPreCommit(pending, part, n);
        return commitListener == null;
    }

    private boolean onPreCommit(CommitListener pending, ByteBuffer scratch, int n) {
        if (n < 0) {
            commitListener = null;
            pending.aborted("client closed the rendezvous before COMMIT");
            return false;
        }
        scratch.flip();
        while (scratch.hasRemaining() && commitFrame.hasRemaining()) commitFrame.put(scratch.get());
        if (commitFrame.hasRemaining()) return true;
        commitListener = null;
        try {
            if (Wire.tryDecode(commitFrame) instanceof Wire.Commit) {
                pending.committed();
                wakeBoth();
                return true;
            }
            pending.aborted("expected COMMIT from the client, got another message");
        } catch (IOException e) {
            pending.aborted("bad COMMIT from the client: " + e.getMessage());
        }
        return false;
    }

    private void peerGone() {
        boolean gracefully = (words.getIntAcquire(offPeerState + Segment.FLAGS) & CLOSED) != 0;
        if (!gracefully) peerDead = true;
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_PEER_CLOSED, id, "shm",
                    gracefully ? "peer closed" : "peer died: control channel EOF without close", null);
        }
        wakeBoth();
        // A waker swaps a sleeper's waiting word to 0, then wakes its futex; every later waker, finding 0,
        // leaves the wake to it. A peer killed between the two (SIGKILL lands anywhere) left this side's
        // reader or writer in the futex for good, and the wake-ups above found the word already 0:
        // PeerKillIT once found the survivor's writer stuck (2026-11-28; docs/reliability.md, bug 21).
        // With the peer gone every sleeper is woken, whatever its word says (a spare wake is harmless).
        if (futex) {
            Futex.wake(buf, myReaderWaiting, Integer.MAX_VALUE);
            Futex.wake(buf, myWriterWaiting, Integer.MAX_VALUE);
        }
        closeChannel();
        // a close under way meanwhile may have decided to keep the channel (it was open then) and handed it
        // on already: the keeper must not hold a closed channel (handOn's look after taking it covers the
        // other order)
        Keeper k = keeper;
        if (keeping && k != null) k.dropped(channel);
    }

    private void wakeBoth() {
        Waker w = waker;
        if (w != null) {
            w.wakeReader();
            w.wakeWriter();
        }
    }

    /** Drops the control channel abruptly, as a dying process would (tests simulate peer death with it). */
    void closeChannel() {
        if (channel == null) return;
        DoorbellLoop.get().close(channel); // out of the loop's watch first, then closed
    }

    /**
     * This end is done with the segment: channel and segment to the keeper, then this end's bit in the
     * kept word (in that order: the client takes a kept channel only once both bits are set, so a key it
     * writes always finds the server's half with its keeper); closed if the keeper does not take them.
     * The channel is looked at again once taken: the doorbell thread may have seen its end and had the
     * keeper drop it just before (finding nothing), and a keeper must not hold a closed channel
     * (docs/reliability.md, bug 19; {@link #peerGone} covers the other order).
     */
    private void handOn() {
        boolean taken;
        try {
            taken = channel.isOpen() && keeper.keep(channel, segment) && channel.isOpen();
        } catch (RuntimeException e) {
            taken = false;
        }
        if (taken) {
            words.getAndBitwiseOrInt(Segment.OFF_KEPT, keptBit);
            return;
        }
        DoorbellLoop.get().close(channel);
        keeper.dropped(channel);
    }

    /**
     * The second end to be done with the rings frees their pages ({@link NativeFiles#removePages}: a
     * hole punched in the segment's file), so a closed connection holds 4 KiB of shared memory (its
     * header, which stray reads of the flags may still touch) instead of the whole segment until the
     * garbage collector unmaps it. Measured 2026-11-24: 3,000 connections opened and closed one after
     * another with 4 GiB heaps (no collection during the run) left 396 MB more in tmpfs ({@code Shmem} in
     * {@code /proc/meminfo}); in a 64 MiB tmpfs (a container's {@code /dev/shm}) a connection between the
     * 490th and the 510th found no room, and later ones stayed on TCP until a collection. Neither end
     * touches the rings after saying it is done, and the count is in the segment, so it frees them
     * whichever end closes last. Without sora's native library the pages wait for the unmapping, as before.
     */
    @Override
    public void ringsDone() {
        if (channel == null) return; // the in-process warm-up's segments: not a file
        if (keeping) { // the rings stay allocated for the next connection
            handOn();
            return;
        }
        if (words.getAndAddInt(Segment.OFF_RINGS_DONE, 1) != 1) return;
        if (!NativeFiles.isAvailable()) return;
        int rc = NativeFiles.removePages(buf, Segment.HEADER_SIZE, (long) recvCapacity + sendCapacity);
        if (rc != 0 && tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_SEGMENT_UNLINK, id, "shm", "rings' pages not freed (kept until the mapping is"
                    + " garbage): " + NativeFiles.describe(rc), null);
        }
    }

    /**
     * Shuts the control channel (the peer sees EOF at once, with our CLOSED flag already set). The
     * mapping is left to the garbage collector: a thread still returning from a read may touch it,
     * and unmapping under it would crash the JVM. The file is already unlinked.
     */
    @Override
    public void close() {
        keeping = keepable();
        closed = true;
        // Kept: the channel stays, handed on once this end's threads left the segment (ringsDone)
        if (keeping) return;
        // Closed already when the doorbell thread saw the peer's end (peerGone): nothing left to shut.
        if (channel == null || !channel.isOpen()) return;
        try {
            channel.shutdownOutput();
        } catch (IOException e) {
            // already closed or the peer is gone
        }
        closeChannel();
    }
}
