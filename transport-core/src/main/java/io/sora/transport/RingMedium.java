package io.sora.transport;

import java.nio.ByteBuffer;

/**
 * The medium under one fast connection: two rings and the cursors and flags that go with them. The
 * stream engines ({@link RingInputStream}, {@link RingOutputStream}) implement every socket semantic
 * once on top of this interface; a medium only moves bytes and publishes state.
 *
 * <h2>Model</h2>
 * Each side owns a <em>receive ring</em> of {@link #receiveCapacity()} bytes that only the peer
 * writes into, and writes into the peer's receive ring ({@link #sendCapacity()} bytes). Positions
 * are monotonic byte counts since the connection began ({@code long}, never wrapping in practice);
 * the ring offset of position {@code p} is {@code p % capacity} (a mask when the capacity is a power
 * of two, as the shm medium's always are). The producer cursor says how many
 * bytes the writer has put into a ring, the consumer cursor how many the reader has taken out
 * (so {@code capacity - (produced - consumed)} bytes of the ring are free: the writer's credits).
 *
 * <ul>
 *   <li>shm: both rings, all cursors and all flags live in one mapped segment; publishing is a
 *       release store, reading an acquire load.</li>
 *   <li>rdma: {@link #writeRing} is an RDMA WRITE into the peer's registered ring and
 *       {@link #publishProduced} its immediate data; consumed cursors and flags travel back as small
 *       messages, so the local copies of the peer's values may lag but never run ahead.</li>
 * </ul>
 *
 * <h2>Waiting</h2>
 * An engine that finds nothing to do spins and yields for a while ({@link AdaptiveWait}), then
 * announces it is about to sleep ({@link #announceReaderWaiting}/{@link #announceWriterWaiting} with
 * {@code true}), which must act as a full fence; it then re-checks its condition and sleeps: in
 * {@link #awaitReader}/{@link #awaitWriter} when the medium can block the thread itself (shm: a futex
 * on the announcement word, woken by the peer process directly), else parked until its
 * {@link Waker} is called. The medium, for its part, after every publish that could end the peer's
 * wait, must fence, look at the peer's announcement and, if the peer is waiting, wake it (shm: the
 * futex, or a one-byte doorbell over the control channel where futexes are unavailable; rdma: the
 * completion of the WRITE WITH IMMEDIATE or the credit message). This Dekker-style handshake means no
 * wake-up is lost and an idle connection costs no CPU.
 *
 * <h2>Threading</h2>
 * Receive methods are called by one reader thread at a time, send methods by one writer thread at a
 * time, {@link #publishFlags} and {@link #close} from any thread. {@link Waker} methods are called
 * from the medium's own thread (doorbell selector, completion thread). Data-path methods must not
 * allocate.
 */
public interface RingMedium {
    /** Flag: this side will write no more bytes; its producer cursor is final. */
    int OUTPUT_SHUTDOWN = 1;
    /** Flag: this side discards whatever arrives; a writer may drop its bytes instead of sending them. */
    int INPUT_SHUTDOWN = 2;
    /** Flag: this side closed the connection (implies both shutdowns). */
    int CLOSED = 4;
    /** Flag (peer only, set by the medium): the peer vanished without closing, e.g. its process died. */
    int DEAD = 8;
    /**
     * Flag, with {@link #CLOSED}: the close was abortive (the application's {@code SO_LINGER} of 0, which
     * resets a TCP connection): the peer reads the bytes already there, then "Connection reset".
     */
    int RESET = 16;

    /** Called by the medium when the peer may have changed something a waiting engine looks at. */
    interface Waker {
        /** New bytes, a flag, or peer death: the local reader should re-check. */
        void wakeReader();

        /** New credits, a flag, or peer death: the local writer should re-check. */
        void wakeWriter();
    }

    /** Installs the waker; called once by the connection before any stream is used. */
    void setWaker(Waker waker);

    // ---- receive direction: my ring, written by the peer ----

    /** Size in bytes of the ring this side reads from. */
    int receiveCapacity();

    /** The peer's producer cursor into my ring (acquire: the bytes below it are visible). */
    long producedByPeer();

    /** Copies {@code len} bytes from my ring at {@code ringOffset} (no wrap: the engine splits). */
    void readRing(int ringOffset, byte[] dst, int dstOffset, int len);

    /**
     * {@link #readRing(int, byte[], int, int)} into a buffer (a direct one, for channels) at absolute
     * index {@code dstIndex}; its position is not changed. The default goes through a temporary array.
     */
    default void readRing(int ringOffset, ByteBuffer dst, int dstIndex, int len) {
        byte[] tmp = new byte[len];
        readRing(ringOffset, tmp, 0, len);
        dst.put(dstIndex, tmp, 0, len);
    }

    /** Publishes my consumer cursor (release), returning credits; wakes the peer's writer if it waits. */
    void publishConsumed(long consumed);

    // ---- send direction: the peer's ring, written by me ----

    /** Size in bytes of the peer's ring that this side writes into. */
    int sendCapacity();

    /** The peer's consumer cursor of its ring (acquire): my credits. */
    long consumedByPeer();

    /** Copies {@code len} bytes into the peer's ring at {@code ringOffset} (no wrap: the engine splits). */
    void writeRing(int ringOffset, byte[] src, int srcOffset, int len);

    /** As {@link #readRing(int, ByteBuffer, int, int)}, the other way: from {@code src} at absolute index {@code srcIndex}. */
    default void writeRing(int ringOffset, ByteBuffer src, int srcIndex, int len) {
        byte[] tmp = new byte[len];
        src.get(srcIndex, tmp, 0, len);
        writeRing(ringOffset, tmp, 0, len);
    }

    /**
     * Publishes my producer cursor (release, after the bytes below it are in place); wakes the peer's
     * reader if it waits. On return the bytes are visible to the peer.
     */
    void publishProduced(long produced);

    /**
     * For a write of {@code n} bytes: after how many bytes copied it publishes what it copied so far
     * ({@link #publishProducedPart}), so that a reader waiting awake copies the message out while the rest
     * is still being copied in; 0: once, at its end (the default: a medium whose publish is dear, rdma).
     */
    default int publishStep(int n) {
        return 0;
    }

    /**
     * Publishes my producer cursor (release) in the middle of a write, with no wake-up: the write's
     * {@link #publishProduced} at its end wakes a reader that sleeps.
     */
    default void publishProducedPart(long produced) {
        publishProduced(produced);
    }

    /**
     * Before the first part of a write published in parts: the cursor at its end, so the peer's reader
     * that copied out a part knows the rest is being copied in ({@link #peerWriteEnd}). No fence: the
     * part's publish orders it.
     */
    default void publishWriteEnd(long end) {
    }

    /** The peer's last {@link #publishWriteEnd} (0: none); read after {@link #producedByPeer}. */
    default long peerWriteEnd() {
        return 0;
    }

    /**
     * The bytes at the start of my send ring that writes keep to while the peer's reader keeps up (0: writes
     * go round the whole ring, the default; the stream uses it only where it is a power of two below {@link
     * #sendCapacity} and the ring's size is one too). A write that
     * finds the ring empty and would reach past them starts again at the ring's start ({@link
     * #publishSkipTo}), so message traffic touches a few cache lines again and again, as a socket's buffer
     * would, not the whole ring in turn; a reader that falls behind still has the whole ring to fill.
     * Both ends of a connection run the same medium: the peer's reader knows the skips ({@link #peerSkipTo}).
     */
    default int keepWithin() {
        return 0;
    }

    /**
     * Before the bytes from cursor {@code to} on are published (the ring empty: every byte written was read
     * and credited): the cursors between the last byte written and {@code to} carry nothing, and the peer's
     * reader jumps them. No fence: the publish of the bytes after it orders it. Only where {@link
     * #keepWithin} is not 0.
     */
    default void publishSkipTo(long to) {
        throw new UnsupportedOperationException("this medium's rings are not skipped");
    }

    /**
     * The peer writer's last {@link #publishSkipTo} (0: none); read after {@link #producedByPeer} found
     * bytes, it is at most that cursor, and a reader whose position is below it jumps to it.
     */
    default long peerSkipTo() {
        return 0;
    }

    /** Whether the peer's writer may skip ({@link #peerSkipTo}): its reader here looks for the jumps. */
    default boolean peerMaySkip() {
        return false;
    }

    // ---- state ----

    /** The peer's flags ({@link #OUTPUT_SHUTDOWN}, {@link #INPUT_SHUTDOWN}, {@link #CLOSED}, {@link #DEAD}); acquire. */
    int peerFlags();

    /** ORs {@code flags} into my published flags (release) and wakes both of the peer's threads. */
    void publishFlags(int flags);

    /**
     * Announces that the local reader is about to sleep ({@code true}, followed by a full fence) or
     * has stopped sleeping ({@code false}).
     */
    void announceReaderWaiting(boolean waiting);

    /** As {@link #announceReaderWaiting}, for the local writer waiting for credits. */
    void announceWriterWaiting(boolean waiting);

    /**
     * Arms ({@code true}, followed by a full fence) or disarms the reader's waiting word for a waiter
     * that is not a thread of this connection (a {@code Selector}): the peer's publish must then reach
     * the {@link Waker}, never a futex. The caller re-checks after arming, as a sleeping reader does.
     * Never while a reader of this connection sleeps (a channel registered with a selector is
     * non-blocking, so its reads never sleep).
     */
    default void armReaderWaker(boolean armed) {
        announceReaderWaiting(armed);
    }

    /**
     * Tells the peer, once and for good, that this side reads through a selector (its channel was
     * registered with one): its answers come through an event loop, so the peer's selector does not
     * poll the rings for them ({@link #peerReadsThroughSelector}). No wake-up. The default: nothing
     * (the peer's selector then polls, as for any peer).
     */
    default void markReadsThroughSelector() {
    }

    /**
     * Records, for the peer, the CPU a local thread of this connection runs on as it starts to wait
     * ({@link ThisCpu#current()}; no fence, no wake-up). The default: nothing (the medium cannot tell).
     */
    default void publishCpu(int cpu) {
    }

    /**
     * The CPU the peer's thread last published with {@link #publishCpu} (when it last started a wait),
     * or -1 when unknown: a waiter on that same CPU knows its peer cannot run while it spins.
     */
    default int peerCpu() {
        return -1;
    }

    /** {@link #peerPlacement}: the peer's CPU, or this thread's, is unknown. */
    int PEER_UNKNOWN = 0;
    /** {@link #peerPlacement}: the peer's thread last waited on this thread's CPU; it cannot run while this one spins. */
    int PEER_HERE = 1;
    /** {@link #peerPlacement}: the peer's thread last waited on another CPU; its answer can come while this one spins. */
    int PEER_ELSEWHERE = 2;

    /**
     * As a thread of this connection starts to wait on CPU {@code cpu} ({@link ThisCpu#current()}, -1:
     * unknown): records it for the peer ({@link #publishCpu}) and tells where the peer's thread runs,
     * {@link #PEER_UNKNOWN}, {@link #PEER_HERE} or {@link #PEER_ELSEWHERE}. Stream waits
     * ({@code AdaptiveWait}) and a selector's poll decide with it whether spinning can pay.
     */
    default int peerPlacement(int cpu) {
        if (cpu < 0) return PEER_UNKNOWN;
        publishCpu(cpu);
        int peer = peerCpu();
        return peer < 0 ? PEER_UNKNOWN : peer == cpu ? PEER_HERE : PEER_ELSEWHERE;
    }

    /**
     * Whether {@link #consumedByPeer} is the peer's cursor itself (shm: its word in shared memory), not a
     * count it reports now and then (rdma: every quarter ring, or with a change of its flags): only then
     * can a dead peer's unread bytes of this side be told from none.
     */
    default boolean consumedByPeerExact() {
        return true;
    }

    /** Whether the peer said it reads through a selector ({@link #markReadsThroughSelector}). */
    default boolean peerReadsThroughSelector() {
        return false;
    }

    /** As {@link #armReaderWaker}, for the writer's credits. */
    default void armWriterWaker(boolean armed) {
        announceWriterWaiting(armed);
    }

    /**
     * The channel that turns readable when the peer rings this connection's doorbell for an armed
     * waker (shm: the Unix-domain control channel, which also reaches EOF when the peer goes), so that
     * a selector can poll it itself, one hand-off instead of two; null when there is none (then the
     * medium's own thread wakes the selector). Read only by the medium's thread.
     */
    default java.nio.channels.SelectableChannel bellChannel() {
        return null;
    }

    /**
     * Runs {@code action} while the {@link #bellChannel} cannot be closed (its close waits for the action)
     * and returns what it returns; {@code -1}, without running it, once the channel is closed or where
     * there is none. What acts on the channel's descriptor by number, outside the channel (another epoll
     * set), holds this, so that it never reaches a file that reused the number after a close.
     */
    default int whileBellOpen(java.util.function.IntSupplier action) {
        return -1;
    }

    /**
     * The selector of the medium's own thread that watches the {@link #bellChannel} (shm: the JVM's
     * doorbell loop), or null. A selector polling the bell itself may narrow that watch to the peer's
     * hang-up ({@link #bellMuted}) and read the bells itself ({@link #drainBell}), so that a bell wakes
     * one thread, not two.
     */
    default java.nio.channels.Selector bellWatcher() {
        return null;
    }

    /** Changes the events a watcher's epoll set waits for on a channel: 0, or an errno. */
    interface BellControl {
        int modify(java.nio.channels.Selector watcher, java.nio.channels.SelectableChannel channel, int epollEvents);
    }

    /**
     * {@code mute}: a selector reads the bells from now on, and the {@link #bellWatcher} watches only
     * for the peer's hang-up (its epoll events narrowed through {@code control}, by the watcher's own
     * thread, which alone may touch its registration); false: the watcher reads the bells again. A
     * thread of this connection about to sleep for a bell unmutes first. Asynchronous; the default
     * does nothing (the watcher keeps reading the bells, and a selector that reads them too only
     * takes some of them).
     */
    default void muteBell(boolean mute, BellControl control) {
    }

    /** Whether the bells are left to a selector now ({@link #muteBell}); false once anything unmuted them. */
    default boolean bellMuted() {
        return false;
    }

    /**
     * Reads the bells waiting on the {@link #bellChannel}, as the medium's own thread would, waking
     * what they wake; at the channel's end, marks the peer gone. Returns false once the channel is
     * finished (peer gone, or closed here).
     */
    default boolean drainBell(java.nio.ByteBuffer scratch) {
        return true;
    }

    /**
     * Blocks the local reader, after {@code announceReaderWaiting(true)} and a re-check, until the
     * peer's publish or {@link #wakeLocalReader()} wakes it or {@code timeoutNanos} ({@code <= 0}: no
     * limit) passes; may return early. Returns false without blocking when this medium does not block
     * threads itself: the engine then parks and relies on its {@link Waker}.
     */
    default boolean awaitReader(long timeoutNanos) {
        return false;
    }

    /**
     * As {@link #awaitWriter()}, at most {@code timeoutNanos} (0: no bound): a writer that may move its
     * direction to TCP ({@link #switchToTcp}) looks again now and then. The default: false (the caller parks).
     */
    default boolean awaitWriter(long timeoutNanos) {
        return timeoutNanos == 0 && awaitWriter();
    }

    // ---- a direction moved to TCP (docs/shm.md, "Buffering") ----

    /**
     * This end's reader follows the peer's bytes onto the TCP connection once the peer moved its writes
     * there ({@link #switchToTcp}): said when the application holds a stream that reads TCP after the
     * switch. The default: nothing (the medium carries no switch, and the peer never moves).
     */
    default void offerTcpFollow() {
    }

    /**
     * 0 where the peer sees this end's writer wait at once ({@link #announceWriterWaiting}: shm's shared
     * word); else how long a writer waits before it is worth telling the peer ({@link #writerStalled}), a
     * message each way (RDMA): a writer that may move to TCP then sleeps in slices of at most this.
     */
    default long writerStallNanos() {
        return 0;
    }

    /** Tells the peer that this end's writer has waited {@link #writerStallNanos} or more (true), or no longer (false). */
    default void writerStalled(boolean stalled) {
    }

    /** Whether this medium can move a direction to TCP ({@link #switchToTcp}); the default: no. */
    default boolean carriesTcpSwitch() {
        return false;
    }

    /**
     * This end's writer: from byte {@code at} of its direction on (its producer cursor, every earlier byte
     * in the peer's ring) its bytes go by the TCP connection, for good. False, and nothing recorded, where
     * the medium cannot carry it or the peer's reader does not follow ({@link #offerTcpFollow}).
     */
    default boolean switchToTcp(long at) {
        return false;
    }

    /** Whether the peer's reader follows a move of this end's bytes to TCP ({@link #offerTcpFollow}). */
    default boolean peerFollowsTcp() {
        return false;
    }

    /** The cursor from which the peer's bytes come by TCP ({@link #switchToTcp}); -1: they do not. Acquire. */
    default long peerSwitchedAt() {
        return -1;
    }

    /** Whether the peer's writer waits for room in this end's ring (asleep, or a selector armed for it). */
    default boolean peerWriterWaiting() {
        return false;
    }

    /** As {@link #awaitReader}, for the local writer waiting for credits (no timeout). */
    default boolean awaitWriter() {
        return false;
    }

    /**
     * What the wake-up that ended the local reader's ({@code reader}) or writer's sleep cost: the time
     * from this medium learning of the peer's publish to {@code nowNanos}, counted once for every
     * thread hand-off on its path. -1 when the medium cannot tell (the default), or when no wake-up
     * was signalled since {@code sleptAtNanos}. The engine's waiting policy spins through waits
     * shorter than this ({@link AdaptiveWait}).
     */
    default long wakeLatencyNanos(boolean reader, long sleptAtNanos, long nowNanos) {
        return -1;
    }

    /** Ends a local reader's {@link #awaitReader} at once (local close, shutdown, peer death); any thread. */
    default void wakeLocalReader() {
    }

    /** Ends a local writer's {@link #awaitWriter} at once; any thread. */
    default void wakeLocalWriter() {
    }

    /**
     * This connection may be driven by a selector (an NIO channel): the medium must never hand its
     * memory to another connection, since a selector's late arming or disarming could write into it. The
     * default: nothing (a medium that keeps nothing).
     */
    default void neverKeep() {
    }

    /**
     * Undoes {@link #neverKeep}: every selector has let go of this connection for good (its channel closes,
     * and no selector arms it, reads its bells or moves them from now on), so its memory may serve another
     * connection. The default: nothing.
     */
    default void allowKeep() {
    }

    /**
     * This end is closed and no thread of this process will read or write the rings again (its
     * streams' reads and writes have left, and any later one fails before touching them): a medium may
     * give their memory back once both ends said so. Called once, after {@link #close}, by the closing
     * thread or by the last read or write to leave. The default: nothing.
     */
    default void ringsDone() {
    }

    /**
     * Releases the medium (control channel, mappings, registrations). Called once, after
     * {@link #publishFlags} with {@link #CLOSED}; the engines no longer touch the rings afterwards
     * except for threads still returning from a call, so memory a thread might still read must stay
     * valid until it is unreachable.
     */
    void close();
}
