package io.sora.transport.disni;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.RingMedium;
import io.sora.transport.VirtualThreads;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The RDMA {@link RingMedium}. My receive ring is registered once for remote write (never remote
 * read) and the peer writes into it with RDMA WRITE WITH IMMEDIATE from its send shadow ring (the one
 * copy in); each such write consumes one of my posted receives, whose completion's byte count advances
 * the peer's producer cursor here (RC delivers in order, so the sum is the cursor). Credits (my
 * consumer cursor) and half-close flags travel back as small inline SENDs ({@link RdmaWire#CTRL}),
 * sent when a quarter of the ring was consumed since the last one, or at once for flags.
 *
 * <p>Receive slots are credits too (as in rsockets and SMC-R): every message, data or CTRL, takes
 * one of the peer's {@link QueuePair#SLOTS} posted receives, and the peer reports in each CTRL how
 * many it has posted again. A data WRITE is posted only while fewer than {@link #DATA_SLOTS} of my
 * messages are unreturned; the last {@link #CTRL_RESERVE} receives are left to CTRL messages, which
 * are few (one per quarter ring consumed, per {@link #SLOT_BATCH} receives reposted, per flag), so
 * nothing ever meets the peer without a posted receive (rnr_retry 7 would retry it forever, holding
 * up the send queue and every credit behind it). Bytes written while no slot credit is left stay in
 * the shadow ring and go out as one WRITE when credits return (the writer does not wait: byte
 * credits already bound what is outstanding); a flag is sent only after every byte before it.
 *
 * <p>Waiting: an engine that spins calls {@link #producedByPeer()} / {@link #consumedByPeer()}, which
 * poll the CQ themselves when nothing new is known (no thread hop on the fast path). With
 * {@code -Dsora.rdma.directWait=true} a reader about to sleep arms the CQ and blocks on the completion
 * channel itself ({@link #awaitReader}): the next completion wakes it in one hand-off, as rsockets'
 * blocking reads do. Otherwise (the default, a writer waiting for credits, a selector, a virtual
 * thread, a reader whose last such wait ran out with nothing arriving, or whenever another thread has
 * the channel) the engine announces its sleep and parks; the
 * connection's completion thread ({@code sora-rdma-cq-<id>}) then arms the CQ, drains it, and blocks
 * on the completion channel, waking the engine on the next completion. Nobody waiting, the thread
 * parks: an idle connection costs no CPU. That wake-up is two hand-offs (channel to completion thread,
 * completion thread to engine); the medium measures the second and reports both
 * ({@link #wakeLatencyNanos}), so the engine's waiting policy spins through waits that are shorter
 * than a wake-up (under emulation a wake-up cost more than a whole spinning round trip).
 *
 * <p>Peer death: an error completion or the CM's DISCONNECTED without the peer's CLOSED flag sets
 * {@link #DEAD}. Close: CLOSED is sent signaled, its completion awaited (bounded), then the CM id is
 * disconnected and the completion thread releases every verbs resource.
 */
final class RdmaMedium implements RingMedium, QueuePair.Completions {
    /**
     * Server side, before COMMIT: pairing messages, and the connection breaking, are handed over here
     * on the completion thread, in the order they happened: a COMMIT polled before the break (by any
     * thread) is handed over before it.
     */
    interface PairingListener {
        void onMessage(RdmaWire.Message m);

        void onBroken(String reason);
    }

    /** In the inbox: the connection broke ({@code why}); the connecting thread takes it as a NO with {@code refusal}. */
    private static final class Broken {
        final String why;
        final String refusal;

        Broken(String why, String refusal) {
            this.why = why;
            this.refusal = refusal;
        }
    }

    static final int EVENT_WAIT_MILLIS = 5000;
    /**
     * Whether a sleeping reader waits on the completion channel itself ({@link #awaitReader}), off
     * unless {@code -Dsora.rdma.directWait=true}. Measured in the Soft-RoCE VM (docs/rdma.md, "Waiting"):
     * no gain there (round trip and streaming within the emulator's spread of the completion thread's),
     * so not the default until measured on RDMA hardware, where a thread hand-off costs microseconds
     * rather than the emulator's hundreds. (A first version, whose direct wake-ups told the waiting
     * policy nothing of their cost, halved one-way streaming: the policy then learnt every wait with
     * its wake-up in it, and slept between chunks.)
     */
    static final boolean DIRECT_WAIT = Boolean.getBoolean("sora.rdma.directWait");
    /**
     * How long a reader waits on the completion channel itself before it hands the wait to the
     * completion thread: an idle connection then costs no wake-ups, and a local event that posts
     * nothing (a {@code shutdownInput} of this side, the peer's death before our disconnect flushes
     * the receives) reaches a reader waiting there within this time.
     */
    static final int DIRECT_SLICE_MILLIS = 50;
    static final long CLOSE_WAIT_NANOS = 1_000_000_000L;
    /**
     * How long the completion thread goes on sending, after a close, the bytes (and the end) held back
     * for the peer's slot credits: credits come only once the peer's application reads, which may be long
     * after (a server not yet in accept()). After it, the peer gets the end as a reset after what it has.
     */
    static final long LINGER_NANOS = 60_000_000_000L;
    private static final int PEER_FLAG_MASK = OUTPUT_SHUTDOWN | INPUT_SHUTDOWN | CLOSED | RESET;
    /**
     * CTRL flags of the move to TCP (docs/shm.md, "Buffering"; docs/rdma.md): this end's reads follow a move
     * (sent as a socket pairs), and this end's bytes go by TCP from the end of the data before the CTRL (RC
     * delivers the data first, so the reader's producer cursor is then the switch point). Both for good, as
     * the stream flags; {@link #WRITER_STALLED} is not: each CTRL says whether the writer is stalled now.
     */
    static final int FOLLOWS = 32;
    static final int SWITCHED = 64;
    static final int WRITER_STALLED = 128;
    private static final int STREAM_FLAGS = OUTPUT_SHUTDOWN | INPUT_SHUTDOWN | CLOSED | DEAD | RESET;
    /** A writer waits this long before it tells the peer ({@link #writerStalled}): a CTRL each way. */
    static final long WRITER_STALL_NANOS = 5_000_000L;
    /** Peer receives kept for CTRL messages: data WRITEs never take them. */
    static final int CTRL_RESERVE = 16;
    /** At most this many of my messages may be unreturned by the peer when I post a data WRITE. */
    static final int DATA_SLOTS = QueuePair.SLOTS - CTRL_RESERVE;
    /** Reposted receives that make a CTRL due (returning them as slot credits). */
    static final int SLOT_BATCH = QueuePair.SLOTS / 4;
    /** Peer flags after which the reader reports EOF once the ring is empty. */
    private static final int EOF_FLAGS = OUTPUT_SHUTDOWN | CLOSED | DEAD;
    /** Bound of one drain: far more polls than a full CQ needs. */
    private static final int DRAIN_POLLS = 4 * (QueuePair.CQ_DEPTH / QueuePair.WC_BATCH + 1);

    final long id;
    final QueuePair qp;
    private final Tracer tracer;
    /**
     * Pairing messages in the order they were polled, and a {@link Broken} for each way the connection
     * broke, after every message polled before it: the server's {@link PairingListener} gets them in
     * this order on the completion thread, the client's connecting thread with {@link #nextMessage}.
     */
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final Object ctrlLock = new Object();
    private final Thread thread;
    private volatile PairingListener listener;
    private volatile Runnable onRelease;
    private volatile Waker waker;
    private ByteBuffer ring;
    private int recvCapacity;
    private ByteBuffer shadow;
    private int sendCapacity;
    private int creditThreshold;
    /** Thread hand-offs between a completion and a sleeping engine running again (see {@link #wakeLatencyNanos}). */
    private static final int WAKE_HOPS = 2;
    /** When the completion thread last woke a sleeping reader / writer (System.nanoTime), 0: never. */
    private volatile long readerWokenAt;
    private volatile long writerWokenAt;
    /** Written only under the poll lock (one writer), read anywhere. */
    private volatile long peerProduced;
    private volatile long peerConsumed;
    private final PeerFlags peerFlags = new PeerFlags();
    private volatile long localConsumed;
    /** The peer's count of receives posted again (its slot credits to me), from its CTRLs. */
    private volatile long peerReposted;
    /** Bytes copied into the shadow ring (writer). */
    private volatile long staged;
    /** Bytes posted as data WRITEs; guarded by ctrlLock. */
    private volatile long flushed;
    /** Consumer cursor and reposted receives as last sent; guarded by ctrlLock. */
    private long reported;
    private volatile long reportedReposts;
    /** Flags to publish (guarded by ctrlLock) and flags sent (only after every byte before them). */
    private volatile int myFlags;
    /** This end's writer stalled ({@link #writerStalled}), sent with the flags; written under ctrlLock. */
    private volatile boolean myWriterStalled;
    /** The peer's writer stalled, as its last CTRL said (the completion thread writes it). */
    private volatile boolean peerWriterStalled;
    private volatile int flagsSent;
    private long myProduced;
    private volatile long closeSeq = -1;
    /** A reader (writer) of the streams sleeps: only the completion thread can wake it. */
    private volatile boolean readerWaiting;
    private volatile boolean writerWaiting;
    /**
     * A selector waits for the reader's (writer's) readiness. Apart from {@link #readerWaiting}: a disarm
     * at the end of a select must not erase the mark of a blocking read sleeping meanwhile (found in review,
     * 2026-11-29: the completion thread parked, and the peer's bytes never woke the read).
     */
    private volatile boolean readerArmed;
    private volatile boolean writerArmed;
    /**
     * Closed with bytes or the end held back for slot credits: until when (System.nanoTime) the completion
     * thread goes on sending them ({@link #LINGER_NANOS}); 0: not lingering.
     */
    private volatile long lingerUntil;
    /** How long a reader waits on the completion channel itself ({@link #awaitReader}); 0: never. */
    private final int directSliceMillis;
    /**
     * The reader's last wait on the completion channel ran out with nothing arriving: it sleeps
     * through the completion thread until it consumes bytes again. The reader's thread only.
     */
    private boolean readerIdle;
    /** The reader's last sleep ended on a completion event it waited for itself. The reader's thread only. */
    private boolean directWoken;
    /** What one hand-off to the reader costs, averaged over the completion thread's wake-ups of it (-1: none yet); reader only. */
    private long readerHop = -1;
    /** Sleeps of the reader woken by the completion thread (measured); reader only. */
    private int classicReaderWakes;
    /** The reader's first sleeps go through the completion thread, to measure a hand-off before any direct wait. */
    static final int MEASURED_WAKES_FIRST = 8;
    /** Reader sleeps spent on the completion channel itself / completion-thread waits on it (tests, diagnostics). */
    private volatile long directWaits;
    private volatile long threadWaits;
    private volatile boolean pairing = true;
    private volatile boolean closing;
    private volatile boolean terminate;
    private volatile String failure;

    RdmaMedium(long id, QueuePair qp, Tracer tracer) {
        this(id, qp, tracer, DIRECT_WAIT ? DIRECT_SLICE_MILLIS : 0);
    }

    /**
     * @param directSliceMillis how long a sleeping reader waits on the completion channel itself
     *                          ({@link #awaitReader}); 0: every sleep goes through the completion thread
     */
    RdmaMedium(long id, QueuePair qp, Tracer tracer, int directSliceMillis) {
        this.id = id;
        this.qp = qp;
        this.tracer = tracer;
        this.directSliceMillis = directSliceMillis;
        qp.setCompletions(this);
        this.thread = io.sora.transport.AgentThreads.daemon(this::run, "sora-rdma-cq-" + id);
        thread.start();
    }

    void setPairingListener(PairingListener l) {
        this.listener = l;
        LockSupport.unpark(thread);
    }

    /** Runs after the verbs resources are released (destroys the CM id). */
    void setOnRelease(Runnable r) {
        this.onRelease = r;
    }

    /** Allocates and registers my receive ring (remote write only). */
    Verbs.Region allocateReceiveRing(int size) throws IOException {
        ring = direct(size, "receive ring");
        recvCapacity = size;
        creditThreshold = Math.max(1, size / 4);
        return qp.register(ring, QueuePair.ACCESS_LOCAL_WRITE | QueuePair.ACCESS_REMOTE_WRITE, "receive ring");
    }

    /** Allocates and registers the shadow of the peer's ring and builds the data work request. */
    void allocateSendRing(int size, long remoteAddress, int remoteRkey) throws IOException {
        shadow = direct(size, "send shadow ring");
        sendCapacity = size;
        Verbs.Region mr = qp.register(shadow, QueuePair.ACCESS_LOCAL_WRITE, "send shadow ring");
        qp.prepareData(mr, remoteAddress, remoteRkey);
    }

    /**
     * A direct buffer of {@code size} bytes, or an IOException that names it when the JVM's direct memory
     * (-XX:MaxDirectMemorySize, by default the heap's maximum) cannot hold it: the connection then stays on
     * TCP with that reason. The shadow ring's size is the server's, up to 256 MiB; its OutOfMemoryError went
     * through the pairing into the application's connect() (found in review, 2026-11-28).
     */
    static ByteBuffer direct(int size, String what) throws IOException {
        try {
            return ByteBuffer.allocateDirect(size);
        } catch (OutOfMemoryError e) {
            throw new IOException("no direct memory for the " + what + " of " + size + " bytes (-XX:MaxDirectMemorySize): "
                    + e.getMessage(), e);
        }
    }

    /** Pairing is over (COMMIT sent or received): the completion thread may park when nobody waits. */
    void paired() {
        pairing = false;
        listener = null;
    }

    /**
     * Ends a pairing in progress with {@code reason}: the connecting thread takes it as a NO, the
     * server's listener (on the completion thread) after every message that arrived before (the CQ is
     * polled first, as for DISCONNECTED).
     */
    void pairingFailed(String reason) {
        if (pairing) {
            drainCq();
            inbox.add(new Broken(reason, reason));
            LockSupport.unpark(thread);
        }
    }

    /** Takes the next pairing message, waiting until {@code deadlineNanos}; null on timeout. */
    RdmaWire.Message nextMessage(long deadlineNanos) throws InterruptedException {
        long left = deadlineNanos - System.nanoTime();
        Object m = left <= 0 ? inbox.poll() : inbox.poll(left, TimeUnit.NANOSECONDS);
        return m instanceof Broken b ? new RdmaWire.No(b.refusal) : (RdmaWire.Message) m;
    }

    /** The completion thread, for tests that wait until it parks. */
    Thread completionThread() {
        return thread;
    }

    /** Why the connection broke, or null. */
    String failure() {
        return failure;
    }

    // ---------------------------------------------------------------- completions (poll lock held)

    @Override
    public void onData(int bytes) {
        long p = peerProduced + bytes;
        // the peer writes only into space this side reported free: more unread bytes than the ring holds
        // mean it overwrote some (a faulty peer); break before any of them is read
        if (bytes < 0 || p - localConsumed > recvCapacity) {
            broken("the peer wrote past the free space of the receive ring (" + (p - localConsumed) + " unread bytes in "
                    + recvCapacity + ")");
            return;
        }
        peerProduced = p;
        Waker w = waker;
        if (w != null) {
            stampWakes(true, false);
            w.wakeReader();
        }
    }

    @Override
    public void onMessage(ByteBuffer control, int offset, int length) {
        if (RdmaWire.isCtrl(control, offset, length)) {
            long c = RdmaWire.ctrlConsumed(control, offset);
            int raw = RdmaWire.ctrlFlags(control, offset);
            int f = raw & (PEER_FLAG_MASK | FOLLOWS | SWITCHED);
            peerWriterStalled = (raw & WRITER_STALLED) != 0;
            long r = RdmaWire.ctrlReposted(control, offset);
            // counts beyond what was sent would let the writer reuse ring space whose bytes are not yet sent,
            // or post past the peer's receives: a faulty peer breaks the connection instead
            if (c > flushed) {
                broken("the peer reported " + c + " bytes consumed of " + flushed + " sent");
                return;
            }
            if (r > qp.posted()) {
                broken("the peer returned " + r + " receives for " + qp.posted() + " messages sent");
                return;
            }
            if (c > peerConsumed) peerConsumed = c;
            if (r > peerReposted) peerReposted = r;
            peerFlags.or(f);
            stampWakes(true, true);
            wakeBoth();
            return;
        }
        try {
            inbox.add(RdmaWire.decode(control, offset, length));
        } catch (ProtocolException e) {
            broken("bad pairing message: " + e.getMessage());
        }
    }

    @Override
    public void onFailure(int status, long wrId, boolean send) {
        if (closing) return;
        broken("work request " + (send ? "send " : "receive ") + (wrId & ~QueuePair.SEND_TAG) + " completed with status "
                + status + (status == QueuePair.STATUS_FLUSH ? " (flushed: queue pair in error)" : ""));
    }

    /**
     * The CM reported DISCONNECTED (or the QP failed): the peer is gone, gracefully only if it sent
     * CLOSED. Any thread (the CM's): everything already in the CQ (a COMMIT, data, a CLOSED flag,
     * however deep) is polled first, so it comes before the break; the pairing listener learns of
     * both on the completion thread, in that order.
     */
    void onDisconnected(String why) {
        drainCq();
        if (!closing) broken(why);
    }

    /**
     * The CM says the connection is gone ({@code DISCONNECTED}, {@code DEVICE_REMOVAL}): it breaks as
     * {@link #onDisconnected} says, then this side disconnects too (IB CM needs both sides; guarded against
     * the completion thread destroying the QP).
     */
    void onCmGone(String why) {
        onDisconnected(why);
        try {
            qp.disconnect();
        } catch (IOException | RuntimeException e) {
            // disconnected already, or the device is gone
        }
    }

    /**
     * The connection broke: DEAD unless the peer closed, and the break queued behind the pairing
     * messages polled so far. Never calls the pairing listener itself: a COMMIT polled before the
     * break but not yet handed over would be overtaken, aborting a pairing the client had committed
     * (issue 12: the accept fell back to TCP and the client's bytes were lost).
     */
    private void broken(String why) {
        if (failure == null) failure = why;
        if (peerFlags.markDead()) {
            qp.traceQp("ERR", why);
            if (tracer.isOn(Category.JSOR)) tracer.event(Hook.QP_STATE, id, "rdma", "peer died: " + why, "ERR");
        }
        inbox.add(new Broken(why, "RDMA connection broke: " + why));
        wakeBoth();
        LockSupport.unpark(thread);
    }

    private void wakeBoth() {
        Waker w = waker;
        if (w != null) {
            w.wakeReader();
            w.wakeWriter();
        }
    }

    // ---------------------------------------------------------------- completion thread

    /** While pairing: when {@link #onPairingExpired} runs (System.nanoTime), or 0 for never. */
    private volatile long pairingDeadline;
    private volatile Runnable onPairingExpired;

    /**
     * Runs {@code onExpiry} on the completion thread if the pairing is still going at {@code deadlineNanos}
     * (System.nanoTime): the server drops a connection whose HELLO never comes. Checked after each of the
     * thread's waits, which end at the deadline once it is set (the one in progress then: within
     * {@link #EVENT_WAIT_MILLIS}).
     */
    void expirePairingAt(long deadlineNanos, Runnable onExpiry) {
        onPairingExpired = onExpiry;
        pairingDeadline = deadlineNanos == 0 ? 1 : deadlineNanos;
    }

    /** How long the completion thread's next wait may last: to the pairing's deadline at most. */
    private int eventWaitMillis() {
        long d = pairingDeadline;
        if (d == 0 || !pairing) return EVENT_WAIT_MILLIS;
        long left = (d - System.nanoTime()) / 1_000_000L + 1;
        return (int) Math.max(1, Math.min(EVENT_WAIT_MILLIS, left));
    }

    private void expireIfDue() {
        long d = pairingDeadline;
        if (d == 0 || !pairing || System.nanoTime() - d < 0) return;
        pairingDeadline = 0;
        Runnable r = onPairingExpired;
        onPairingExpired = null;
        if (r != null) r.run();
    }

    private boolean needed() {
        return readerWaiting || readerArmed || writerWaiting || writerArmed || pairing || unsent() || lingerUntil != 0;
    }

    /** Bytes or flags held back for lack of slot credits: the completion thread polls for the credits. */
    private boolean unsent() {
        return flushed != staged || flagsSent != (myFlags | (myWriterStalled ? WRITER_STALLED : 0));
    }

    private void run() {
        try {
            while (!terminate) {
                if (!needed()) {
                    LockSupport.park(this);
                    continue;
                }
                qp.enterEvents(); // a reader waiting on the channel itself drains it when it wakes
                try {
                    if (terminate) break;
                    qp.arm();
                    drain();
                    lingered();
                    if (terminate || !needed()) continue;
                    threadWaits++;
                    qp.awaitEvent(eventWaitMillis());
                    drain();
                    expireIfDue();
                    lingered();
                } finally {
                    qp.leaveEvents();
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!closing) broken("completion channel failed: " + e.getMessage());
        } finally {
            release();
        }
    }

    /**
     * After a close that left bytes or the end held back for slot credits ({@link #close}), on the completion
     * thread, which sends them as the credits come ({@link #pumpIfDue}): once everything went and the end's
     * message completed, or the peer closed or died, the connection is dropped as a close drops it; past
     * {@link #LINGER_NANOS} what is still held is given up and the peer told so with a reset after what it got.
     */
    private void lingered() {
        long until = lingerUntil;
        if (until == 0 || terminate) return;
        if (failure == null && (peerFlags.get() & (CLOSED | DEAD)) == 0) {
            if (unsent()) {
                if (System.nanoTime() - until < 0) return;
                synchronized (ctrlLock) {
                    try {
                        qp.postCtrl(localConsumed, myFlags | CLOSED | RESET, qp.reposted(), false);
                    } catch (IOException e) {
                        // the drop below tells the peer the connection is gone
                    }
                }
            } else {
                long seq = closeSeq;
                if (seq > 0 && qp.completedUpTo() < seq) return; // the end's message completes as an event
            }
        }
        abort();
    }

    private void drain() {
        pollAll();
        PairingListener l = listener;
        if (l != null) {
            Object m;
            while ((m = inbox.poll()) != null) { // in order: a COMMIT polled before a break is handled first
                if (m instanceof Broken b) {
                    l.onBroken(b.why);
                } else {
                    l.onMessage((RdmaWire.Message) m);
                }
            }
        }
        pumpIfDue();
    }

    private void pollAll() {
        for (int i = 0; i < 1000 && qp.poll(true) > 0; i++) {
            // bounded: the CQ is finite, new completions are picked up by the next round
        }
    }

    /** What the channel's waiter does after draining: held-back bytes or flags, receives to return. */
    private void pumpIfDue() {
        if (!pairing && !closing && (unsent() || qp.reposted() - reportedReposts >= SLOT_BATCH)) pump();
    }

    private void release() {
        qp.destroy();
        Runnable r = onRelease;
        if (r != null) r.run();
    }

    // ---------------------------------------------------------------- RingMedium

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
        long p = peerProduced;
        if (p == localConsumed) {
            if ((peerFlags.get() & EOF_FLAGS) != 0) {
                // the reader is about to report EOF: only once every queued completion is in
                drainCq();
            } else {
                qp.poll(false);
            }
            p = peerProduced;
        }
        return p;
    }

    /**
     * Polls until the CQ is empty, waiting for the poll lock if another thread holds it (a
     * {@code tryLock} poll would return nothing and let EOF overtake queued data). Bounded: the CQ
     * holds at most {@link QueuePair#CQ_DEPTH} completions and the peer adds no data after its flag.
     */
    private void drainCq() {
        for (int i = 0; i < DRAIN_POLLS && qp.poll(true) > 0; i++) {
            // next batch
        }
    }

    @Override
    public void readRing(int ringOffset, byte[] dst, int dstOffset, int len) {
        ring.get(ringOffset, dst, dstOffset, len);
    }

    @Override
    public void publishConsumed(long consumed) {
        localConsumed = consumed;
        readerIdle = false;
        pump();
    }

    @Override
    public int sendCapacity() {
        return sendCapacity;
    }

    /** The peer reports its cursor every quarter ring (or with its flags): a dead peer's unread bytes cannot be told. */
    @Override
    public boolean consumedByPeerExact() {
        return false;
    }

    @Override
    public long consumedByPeer() {
        long c = peerConsumed;
        if (myProduced - c >= sendCapacity) {
            qp.poll(false);
            if (flushed != staged) pump(); // the peer can only free what it was sent
            c = peerConsumed;
        }
        return c;
    }

    @Override
    public void writeRing(int ringOffset, byte[] src, int srcOffset, int len) {
        shadow.put(ringOffset, src, srcOffset, len);
        staged = staged + len; // single writer; the shadow offset of position p is p % sendCapacity, as the engine's
        pump();
        qp.poll(false); // reap send completions and notice errors early
        if (flushed != staged) LockSupport.unpark(thread); // held for slot credits: the completion thread fetches them
    }

    @Override
    public void publishProduced(long produced) {
        myProduced = produced;
    }

    @Override
    public int peerFlags() {
        return peerFlags.get() & STREAM_FLAGS;
    }

    @Override
    public boolean carriesTcpSwitch() {
        return true;
    }

    @Override
    public void offerTcpFollow() {
        publishFlags(FOLLOWS);
    }

    @Override
    public boolean peerFollowsTcp() {
        return (peerFlags.get() & FOLLOWS) != 0;
    }

    @Override
    public boolean switchToTcp(long at) {
        int peer = peerFlags.get();
        if ((peer & FOLLOWS) == 0 || (peer & (CLOSED | DEAD)) != 0 || failure != null) return false;
        publishFlags(SWITCHED); // after every byte staged before it (pump), at the peer after their data
        if (tracer.isOn(io.sora.trace.Category.JSOR)) {
            tracer.event(io.sora.trace.Hook.SHM_TCP_SWITCH, id, "rdma", io.sora.transport.RingOutputStream.SWITCH_REASON,
                    "to peer from byte " + at);
        }
        return true;
    }

    @Override
    public long peerSwitchedAt() {
        // the flag first: set by the completion thread after the data before it counted
        return (peerFlags.get() & SWITCHED) != 0 ? peerProduced : -1;
    }

    @Override
    public boolean peerWriterWaiting() {
        return peerWriterStalled;
    }

    @Override
    public long writerStallNanos() {
        return WRITER_STALL_NANOS;
    }

    @Override
    public void writerStalled(boolean stalled) {
        synchronized (ctrlLock) {
            myWriterStalled = stalled;
        }
        pump();
        if (unsent()) LockSupport.unpark(thread);
    }

    @Override
    public void publishFlags(int flags) {
        synchronized (ctrlLock) {
            myFlags = myFlags | flags;
        }
        pump();
        if (unsent()) LockSupport.unpark(thread);
    }

    private long dataSlotsFree() {
        return DATA_SLOTS - (qp.posted() - peerReposted);
    }

    /**
     * Sends what is due and allowed: staged bytes while slot credits last (one WRITE per contiguous
     * range), then a CTRL if my flags changed (only once every byte before them is posted), a quarter
     * of my ring was consumed, or {@link #SLOT_BATCH} receives were reposted since the last CTRL. Any
     * thread but the poll lock holder; never waits for credits.
     */
    private void pump() {
        synchronized (ctrlLock) {
            try {
                long st = staged;
                long f = flushed;
                while (f != st && dataSlotsFree() > 0) {
                    int offset = (int) (f % sendCapacity);
                    int n = (int) Math.min(st - f, sendCapacity - offset);
                    // counted before the post: the peer's CTRL for these bytes can come back before the
                    // next line runs, and a consumed count above flushed breaks the connection (onMessage)
                    f += n;
                    flushed = f;
                    qp.postData(offset, n);
                }
                // the stream flags only once every byte before them is posted; a writer's stall at once, data
                // held back for slot credits or not (it says nothing of the data, and a peer that must move its
                // own bytes to TCP waits for it: a writer of many small messages runs out of slot credits before
                // its ring fills)
                int stall = myWriterStalled ? WRITER_STALLED : 0;
                // a stall takes one of the receives the peer keeps for CTRLs: told only while half of those are
                // free, so that credits and the stream flags always find one (found in review); its end always
                // goes (one per stall told): a stale stall at the peer would move the peer's bytes to TCP
                if (stall != 0 && (flagsSent & WRITER_STALLED) == 0 && qp.posted() - peerReposted > QueuePair.SLOTS - CTRL_RESERVE / 2) {
                    stall = flagsSent & WRITER_STALLED;
                }
                int flags = (f == st ? myFlags : flagsSent & ~WRITER_STALLED) | stall;
                long c = localConsumed;
                long r = qp.reposted();
                if (flags != flagsSent || c - reported >= creditThreshold || r - reportedReposts >= SLOT_BATCH) {
                    boolean closingMessage = (flags & CLOSED) != 0 && (flagsSent & CLOSED) == 0;
                    long seq = qp.postCtrl(c, flags, r, closingMessage);
                    reported = c;
                    reportedReposts = r;
                    flagsSent = flags;
                    if (closingMessage) closeSeq = seq;
                }
            } catch (IOException e) {
                // released by a close racing this call: the stream's own close flag fails the next write
                if (!closing) broken("RDMA post failed: " + e.getMessage());
            }
        }
    }

    /**
     * A sleeping engine is woken in two hand-offs: the completion channel wakes the completion thread,
     * which unparks the engine. The second is measured (from the completion thread's stamp to the
     * engine running again), the first taken to cost as much.
     */
    /** On the completion thread only (the hand-off measured): stamps the wake-up of each named engine that sleeps. */
    private void stampWakes(boolean reader, boolean writer) {
        boolean r = reader && readerWaiting;
        boolean w = writer && writerWaiting;
        if ((r || w) && Thread.currentThread() == thread) {
            long now = System.nanoTime();
            if (r) readerWokenAt = now;
            if (w) writerWokenAt = now;
        }
    }

    @Override
    public long wakeLatencyNanos(boolean reader, long sleptAtNanos, long nowNanos) {
        if (reader && directWoken) {
            directWoken = false;
            return readerHop; // one hand-off, as measured on the completion thread's wake-ups (-1: none yet)
        }
        long woken = reader ? readerWokenAt : writerWokenAt;
        if (woken == 0 || woken - sleptAtNanos < 0 || nowNanos - woken < 0) return -1;
        long hop = nowNanos - woken;
        if (reader && directSliceMillis > 0) { // only direct waits use the measured hand-off
            readerHop = readerHop < 0 ? hop : readerHop + ((hop - readerHop) >> 2);
            classicReaderWakes++;
        }
        return WAKE_HOPS * hop;
    }

    /**
     * A reader about to sleep: the completion thread is called only if the reader will not wait on the
     * channel itself ({@link #awaitReader} calls it when it finds it cannot).
     */
    @Override
    public void announceReaderWaiting(boolean waiting) {
        readerWaiting = waiting;
        if (waiting) {
            VarHandle.fullFence();
            if (readerSleepsThroughThread()) LockSupport.unpark(thread);
        }
    }

    /**
     * Whether the reader's next sleep goes through the completion thread whatever else holds: direct
     * waits are off, a hand-off is not measured yet, or its last direct wait ran out (see {@link #awaitReader}).
     * The reader's thread only.
     */
    private boolean readerSleepsThroughThread() {
        return directSliceMillis == 0 || readerIdle || classicReaderWakes < MEASURED_WAKES_FIRST;
    }

    /** A selector waits for this reader: only the completion thread can wake it. */
    @Override
    public void armReaderWaker(boolean armed) {
        readerArmed = armed;
        if (armed) callCompletionThread();
    }

    /** After a mark that makes the completion thread {@link #needed}: it waits on the channel from now. */
    private void callCompletionThread() {
        VarHandle.fullFence();
        LockSupport.unpark(thread);
    }

    /** A selector waits for this writer's credits: only the completion thread can wake it. */
    @Override
    public void armWriterWaker(boolean armed) {
        writerArmed = armed;
        if (armed) callCompletionThread();
    }

    /**
     * The sleeping reader waits on the completion channel itself: arms the CQ, drains it (what arrived
     * between the reader's re-check and the arming), and blocks for the next completion event, at most
     * {@link #DIRECT_SLICE_MILLIS} (or the read's time-out); then drains again and returns, and the engine
     * re-checks. One hand-off (the channel wakes this thread) instead of two. Returns false, having
     * called the completion thread, when the wait goes through it instead: direct waits are off, the
     * reader has not yet been woken {@link #MEASURED_WAKES_FIRST} times by the completion thread (what
     * one hand-off costs is measured on those, and {@link #wakeLatencyNanos} reports it for each direct
     * wake-up, so the engine's waiting policy learns the wait without its wake-up, as for the others),
     * the thread is virtual (a blocking native call would pin its carrier), the reader's last direct
     * wait ran out (an idle connection then costs no periodic wake-ups), or another thread has the
     * channel (the completion thread, which then wakes this reader).
     */
    @Override
    public boolean awaitReader(long timeoutNanos) {
        if (readerSleepsThroughThread() || VirtualThreads.isVirtual(Thread.currentThread()) || !qp.tryEnterEvents()) {
            LockSupport.unpark(thread);
            return false;
        }
        try {
            if (terminate || qp.isDestroyed()) {
                LockSupport.unpark(thread);
                return false;
            }
            qp.arm();
            pollAll();
            if (peerProduced == localConsumed && (peerFlags.get() & EOF_FLAGS) == 0) {
                int millis = directSliceMillis;
                if (timeoutNanos > 0) millis = (int) Math.max(1, Math.min(millis, (timeoutNanos + 999_999) / 1_000_000));
                directWaits++;
                boolean event = qp.awaitEvent(millis);
                directWoken = event;
                pollAll();
                if (!event && millis == directSliceMillis && peerProduced == localConsumed) readerIdle = true;
            }
            pumpIfDue();
        } catch (IOException | RuntimeException e) {
            if (!closing) broken("completion channel failed: " + e.getMessage());
        } finally {
            qp.leaveEvents();
        }
        return true;
    }

    /** {reader sleeps that waited on the completion channel itself, waits of the completion thread on it}; exact once idle. */
    long[] waitCounts() {
        return new long[] {directWaits, threadWaits};
    }

    @Override
    public void announceWriterWaiting(boolean waiting) {
        writerWaiting = waiting;
        if (waiting) callCompletionThread();
    }

    /**
     * Waits (bounded) until the CLOSED message has completed, i.e. the peer has every byte and the
     * flag, then disconnects; the completion thread releases the resources. Bytes or the flag still held
     * back for the peer's slot credits (more small writes than it has receives posted, its application
     * not reading yet: only its reads return credits) are left to the completion thread, which sends them
     * as the credits come ({@link #lingered}), and the close returns at once, as TCP's does with bytes in
     * its send buffer. Before, the close waited 1 s for them, then disconnected: the peer read what had
     * gone and then the end, the rest lost unseen (found in review, 2026-11-29).
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        pump();
        if (unsent() && failure == null && (peerFlags.get() & (CLOSED | DEAD)) == 0) {
            long until = System.nanoTime() + LINGER_NANOS;
            lingerUntil = until == 0 ? 1 : until;
            LockSupport.unpark(thread);
            return;
        }
        long seq = closeSeq;
        while (seq > 0 && qp.completedUpTo() < seq && failure == null && System.nanoTime() - deadline < 0) {
            if (qp.poll(true) <= 0) LockSupport.parkNanos(10_000L);
        }
        abort();
    }

    /**
     * Drops the connection without a CLOSED flag (the peer sees it die); pairing failures and listener close
     * use it. Streams on this medium end too, as at the peer's death (EOF after what arrived; writes fail):
     * a connection an accept had just claimed when its listener's close aborted it left its reads and
     * writes waiting for ever (found in review, 2026-11-29).
     */
    void abort() {
        if (peerFlags.markDead()) wakeBoth();
        closing = true;
        pairing = false;
        listener = null;
        try {
            qp.disconnect();
        } catch (IOException | RuntimeException e) {
            // not connected (yet): nothing to tear down on the wire
        }
        terminate = true;
        LockSupport.unpark(thread);
    }

    boolean isReleasedOrClosing() {
        return closing;
    }
}
