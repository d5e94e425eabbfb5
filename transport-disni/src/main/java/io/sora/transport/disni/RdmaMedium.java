package io.sora.transport.disni;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.RingMedium;
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
 * <p>Waiting: an engine that spins calls {@link #producedByPeer()} / {@link #consumedByPeer()}, which
 * poll the CQ themselves when nothing new is known (no thread hop on the fast path). An engine about
 * to sleep announces it; the connection's completion thread ({@code sora-rdma-cq-<id>}) then arms the
 * CQ, drains it, and blocks on the completion channel, waking the engine on the next completion.
 * Nobody waiting, the thread parks: an idle connection costs no CPU.
 *
 * <p>Peer death: an error completion or the CM's DISCONNECTED without the peer's CLOSED flag sets
 * {@link #DEAD}. Close: CLOSED is sent signaled, its completion awaited (bounded), then the CM id is
 * disconnected and the completion thread releases every verbs resource.
 */
final class RdmaMedium implements RingMedium, QueuePair.Completions {
    /** Server side, before COMMIT: pairing messages are handed over here, on the completion thread. */
    interface PairingListener {
        void onMessage(RdmaWire.Message m);

        void onBroken(String reason);
    }

    static final int EVENT_WAIT_MILLIS = 5000;
    static final long CLOSE_WAIT_NANOS = 1_000_000_000L;
    private static final int PEER_FLAG_MASK = OUTPUT_SHUTDOWN | INPUT_SHUTDOWN | CLOSED;
    /** Peer flags after which the reader reports EOF once the ring is empty. */
    private static final int EOF_FLAGS = OUTPUT_SHUTDOWN | CLOSED | DEAD;
    /** Bound of one drain: far more polls than a full CQ needs. */
    private static final int DRAIN_POLLS = 4 * (QueuePair.CQ_DEPTH / QueuePair.WC_BATCH + 1);

    final long id;
    final QueuePair qp;
    private final Tracer tracer;
    private final LinkedBlockingQueue<RdmaWire.Message> inbox = new LinkedBlockingQueue<>();
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
    /** Written only under the poll lock (one writer), read anywhere. */
    private volatile long peerProduced;
    private volatile long peerConsumed;
    private final PeerFlags peerFlags = new PeerFlags();
    private volatile long localConsumed;
    private long reported;
    private int myFlags;
    private long myProduced;
    private volatile long closeSeq = -1;
    private volatile boolean readerWaiting;
    private volatile boolean writerWaiting;
    private volatile boolean pairing = true;
    private volatile boolean closing;
    private volatile boolean terminate;
    private volatile String failure;

    RdmaMedium(long id, QueuePair qp, Tracer tracer) {
        this.id = id;
        this.qp = qp;
        this.tracer = tracer;
        qp.setCompletions(this);
        this.thread = new Thread(this::run, "sora-rdma-cq-" + id);
        thread.setDaemon(true);
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
        ring = ByteBuffer.allocateDirect(size);
        recvCapacity = size;
        creditThreshold = Math.max(1, size / 4);
        return qp.register(ring, QueuePair.ACCESS_LOCAL_WRITE | QueuePair.ACCESS_REMOTE_WRITE, "receive ring");
    }

    /** Allocates and registers the shadow of the peer's ring and builds the data work request. */
    void allocateSendRing(int size, long remoteAddress, int remoteRkey) throws IOException {
        shadow = ByteBuffer.allocateDirect(size);
        sendCapacity = size;
        Verbs.Region mr = qp.register(shadow, QueuePair.ACCESS_LOCAL_WRITE, "send shadow ring");
        qp.prepareData(mr, remoteAddress, remoteRkey);
    }

    /** Pairing is over (COMMIT sent or received): the completion thread may park when nobody waits. */
    void paired() {
        pairing = false;
        listener = null;
    }

    /** Takes the next pairing message, waiting until {@code deadlineNanos}; null on timeout. */
    RdmaWire.Message nextMessage(long deadlineNanos) throws InterruptedException {
        long left = deadlineNanos - System.nanoTime();
        return left <= 0 ? inbox.poll() : inbox.poll(left, TimeUnit.NANOSECONDS);
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
        peerProduced = peerProduced + bytes;
        Waker w = waker;
        if (w != null) w.wakeReader();
    }

    @Override
    public void onMessage(ByteBuffer control, int offset, int length) {
        if (RdmaWire.isCtrl(control, offset, length)) {
            long c = RdmaWire.ctrlConsumed(control, offset);
            int f = RdmaWire.ctrlFlags(control, offset) & PEER_FLAG_MASK;
            if (c > peerConsumed) peerConsumed = c;
            peerFlags.or(f);
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

    /** The CM reported DISCONNECTED (or the QP failed): the peer is gone, gracefully only if it sent CLOSED. */
    void onDisconnected(String why) {
        drainCq(); // a CLOSED flag already in the CQ comes first, however deep
        if (!closing) broken(why);
    }

    private void broken(String why) {
        if (failure == null) failure = why;
        if (peerFlags.markDead()) {
            qp.traceQp("ERR", why);
            if (tracer.isOn(Category.JSOR)) tracer.event(Hook.QP_STATE, id, "rdma", "peer died: " + why, "ERR");
        }
        PairingListener l = listener;
        if (l != null) l.onBroken(why);
        inbox.add(new RdmaWire.No("RDMA connection broke: " + why));
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

    private boolean needed() {
        return readerWaiting || writerWaiting || pairing;
    }

    private void run() {
        try {
            while (!terminate) {
                if (!needed()) {
                    LockSupport.park(this);
                    continue;
                }
                qp.arm();
                drain();
                if (terminate || !needed()) continue;
                qp.awaitEvent(EVENT_WAIT_MILLIS);
                drain();
            }
        } catch (IOException | RuntimeException e) {
            if (!closing) broken("completion channel failed: " + e.getMessage());
        } finally {
            release();
        }
    }

    private void drain() {
        for (int i = 0; i < 1000 && qp.poll(true) > 0; i++) {
            // bounded: the CQ is finite, new completions are picked up by the next round
        }
        PairingListener l = listener;
        if (l != null) {
            RdmaWire.Message m;
            while ((m = inbox.poll()) != null) l.onMessage(m);
        }
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
        if (consumed - reported >= creditThreshold) sendCtrl(false);
    }

    @Override
    public int sendCapacity() {
        return sendCapacity;
    }

    @Override
    public long consumedByPeer() {
        long c = peerConsumed;
        if (myProduced - c >= sendCapacity) {
            qp.poll(false);
            c = peerConsumed;
        }
        return c;
    }

    @Override
    public void writeRing(int ringOffset, byte[] src, int srcOffset, int len) {
        shadow.put(ringOffset, src, srcOffset, len);
        try {
            qp.postData(ringOffset, len);
        } catch (IOException e) {
            // released by a close racing this write: the stream's own close flag fails the next write
            if (!closing) broken("RDMA WRITE failed: " + e.getMessage());
        }
        qp.poll(false); // reap send completions and notice errors early
    }

    @Override
    public void publishProduced(long produced) {
        myProduced = produced;
    }

    @Override
    public int peerFlags() {
        return peerFlags.get();
    }

    @Override
    public void publishFlags(int flags) {
        synchronized (ctrlLock) {
            myFlags |= flags;
        }
        sendCtrl((flags & CLOSED) != 0);
    }

    private void sendCtrl(boolean closingMessage) {
        synchronized (ctrlLock) {
            long c = localConsumed;
            reported = c;
            try {
                long seq = qp.postCtrl(c, myFlags, closingMessage);
                if (closingMessage) closeSeq = seq;
            } catch (IOException e) {
                if (!closing) broken("credit message failed: " + e.getMessage());
            }
        }
    }

    @Override
    public void announceReaderWaiting(boolean waiting) {
        readerWaiting = waiting;
        if (waiting) {
            VarHandle.fullFence();
            LockSupport.unpark(thread);
        }
    }

    @Override
    public void announceWriterWaiting(boolean waiting) {
        writerWaiting = waiting;
        if (waiting) {
            VarHandle.fullFence();
            LockSupport.unpark(thread);
        }
    }

    /**
     * Waits (bounded) until the CLOSED message has completed, i.e. the peer has every byte and the
     * flag, then disconnects; the completion thread releases the resources.
     */
    @Override
    public void close() {
        long seq = closeSeq;
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        while (seq > 0 && qp.completedUpTo() < seq && failure == null && System.nanoTime() - deadline < 0) {
            if (qp.poll(true) <= 0) LockSupport.parkNanos(10_000L);
        }
        abort();
    }

    /** Drops the connection without a CLOSED flag (the peer sees it die); pairing failures and listener close use it. */
    void abort() {
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
