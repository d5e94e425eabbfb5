package io.sora.transport.disni;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection's queue pair logic on top of {@link Verbs}: the registered control buffer
 * ({@link #SLOTS} receive slots plus an outgoing area), the posted receives, the send sequence and
 * selective signalling, and the dispatch of completions. The verbs (DiSNI's in production, an
 * in-memory fake in tests) only execute prebuilt work requests, so the data path allocates nothing.
 *
 * <p>Threading: posts are serialised by a send lock, CQ polling by a poll lock; a thread holding the
 * send lock may take the poll lock (waiting for room in the send queue polls), never the other way
 * round. {@link #destroy()} takes both, in that order, and marks the object dead, after which posts
 * throw and polls return -1.
 */
final class QueuePair {
    static final int SLOTS = 128;
    static final int SQ_DEPTH = 256;
    static final int CQ_DEPTH = SLOTS + SQ_DEPTH + 16;
    static final int SIGNAL_EVERY = 32;
    static final int WC_BATCH = 16;
    static final int MAX_INLINE = 64;
    static final long SEND_TAG = 1L << 62;
    /** Outgoing area: pairing messages (one slot each, never reused) and the inline CTRL image. */
    private static final int OUT_OFFSET = SLOTS * RdmaWire.SLOT_SIZE;
    private static final int MSG_AREAS = 4;
    private static final int CTRL_OFFSET = OUT_OFFSET + MSG_AREAS * RdmaWire.SLOT_SIZE;
    private static final int CONTROL_SIZE = CTRL_OFFSET + RdmaWire.SLOT_SIZE;
    static final int OP_RECV = IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode();
    static final int OP_RECV_IMM = IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode();
    static final int STATUS_OK = IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal();
    static final int STATUS_FLUSH = IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal();
    static final int ACCESS_LOCAL_WRITE = com.ibm.disni.verbs.IbvMr.IBV_ACCESS_LOCAL_WRITE;
    static final int ACCESS_REMOTE_WRITE = com.ibm.disni.verbs.IbvMr.IBV_ACCESS_REMOTE_WRITE;

    /** What polling hands over; called with the poll lock held, so it must not post or block. */
    interface Completions {
        /** An RDMA WRITE WITH IMMEDIATE of {@code bytes} landed in the receive ring. */
        void onData(int bytes);

        /** A SEND arrived; its bytes are valid only during the call. */
        void onMessage(ByteBuffer control, int offset, int length);

        /** A work request completed in error ({@code status} as ibv_wc_status). */
        void onFailure(int status, long wrId, boolean send);
    }

    final long conn;
    private final Verbs verbs;
    private final Tracer tracer;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock pollLock = new ReentrantLock();
    /**
     * Held by the one thread that arms the CQ and waits on the completion channel: the connection's
     * completion thread, or a reader waiting on it directly ({@code RdmaMedium.awaitReader}).
     * {@link #destroy()} takes it first, so the channel is never freed under a waiting thread. Taken
     * before the send and poll locks, never while holding them.
     */
    private final ReentrantLock eventLock = new ReentrantLock();
    private final ByteBuffer control = ByteBuffer.allocateDirect(CONTROL_SIZE);
    private Verbs.Region controlMr;
    private long shadowAddress;
    private long remoteRing;
    private int msgAreasUsed;
    /** Send sequence, i.e. messages posted (each consumes one of the peer's receives); written under sendLock. */
    private volatile long posted;
    /** Receives posted again after their completion (the peer's slot credits to return); written under pollLock. */
    private volatile long reposted;
    private long lastSignaled;
    private volatile long completedUpTo;
    private volatile boolean destroyed;
    /** Held while the verbs resources are freed and while disconnecting: the two never overlap. */
    private final Object lifecycle = new Object();
    private Completions completions;

    /** Registers the control buffer on {@code verbs} and posts every receive; destroys the verbs on failure. */
    QueuePair(Verbs verbs, long conn, Tracer tracer) throws IOException {
        this.verbs = verbs;
        this.conn = conn;
        this.tracer = tracer;
        try {
            traceQp("INIT", "qp_num=" + verbs.qpNum() + " sq=" + SQ_DEPTH + " rq=" + SLOTS + " cq=" + CQ_DEPTH);
            controlMr = register(control, ACCESS_LOCAL_WRITE, "control");
            for (int i = 0; i < SLOTS; i++) {
                verbs.prepareRecv(i, controlMr.address() + (long) i * RdmaWire.SLOT_SIZE, RdmaWire.SLOT_SIZE, controlMr.lkey());
                verbs.postRecv(i);
            }
            verbs.prepareSend(Verbs.MSG, IbvSendWR.IBV_WR_SEND, controlMr.address() + OUT_OFFSET, RdmaWire.SLOT_SIZE,
                    controlMr.lkey(), 0, 0);
            verbs.prepareSend(Verbs.CTRL, IbvSendWR.IBV_WR_SEND, controlMr.address() + CTRL_OFFSET, RdmaWire.CTRL_SIZE,
                    controlMr.lkey(), 0, 0);
        } catch (IOException | RuntimeException e) {
            destroy();
            throw e;
        }
    }

    /** A queue pair on DiSNI's verbs for {@code id} (address resolved or connect request). */
    static QueuePair open(com.ibm.disni.verbs.RdmaCmId id, long conn, Tracer tracer) throws IOException {
        return new QueuePair(new DisniVerbs(id, conn, tracer, CQ_DEPTH, SQ_DEPTH, SLOTS, MAX_INLINE, WC_BATCH), conn, tracer);
    }

    void setCompletions(Completions completions) {
        this.completions = completions;
    }

    /** Registers {@code buffer} (direct) with {@code access}; traced as MR_REGISTER with its size and keys. */
    Verbs.Region register(ByteBuffer buffer, int access, String what) throws IOException {
        Verbs.Region mr = verbs.register(buffer, access);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.MR_REGISTER, conn, "rdma", null, what + " bytes=" + buffer.capacity() + " lkey=" + mr.lkey()
                    + " rkey=" + mr.rkey() + " access=" + access + " rc=0");
        }
        return mr;
    }

    /** The registered control buffer, for tests of the message layout. */
    ByteBuffer control() {
        return control;
    }

    // ---------------------------------------------------------------- sending

    /** Builds the data work request: RDMA WRITE WITH IMM from the shadow ring into the peer's ring. */
    void prepareData(Verbs.Region shadowMr, long remoteRingAddress, int remoteRkey) throws IOException {
        sendLock.lock();
        try {
            verbs.prepareSend(Verbs.DATA, IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, shadowMr.address(), 1, shadowMr.lkey(),
                    remoteRingAddress, remoteRkey);
            shadowAddress = shadowMr.address();
            remoteRing = remoteRingAddress;
        } finally {
            sendLock.unlock();
        }
    }

    /** Writes {@code length} bytes at ring offset {@code offset} of the shadow into the same offset of the peer's ring. */
    void postData(int offset, int length) throws IOException {
        sendLock.lock();
        try {
            awaitRoom();
            long seq = nextSeq(); // checks destroyed before any field of the (then freed) work request is touched
            verbs.setSge(Verbs.DATA, shadowAddress + offset, length);
            verbs.setRemoteAddress(remoteRing + offset);
            verbs.setWr(Verbs.DATA, SEND_TAG | seq, signalFlag(false));
            verbs.postSend(Verbs.DATA);
        } finally {
            sendLock.unlock();
        }
    }

    /** Sends a CTRL message inline; returns its sequence number (completed when {@link #completedUpTo()} reaches it). */
    long postCtrl(long consumed, int flags, long repostedReceives, boolean signaled) throws IOException {
        sendLock.lock();
        try {
            awaitRoom();
            long seq = nextSeq();
            RdmaWire.encodeCtrl(control, CTRL_OFFSET, consumed, flags, repostedReceives);
            verbs.setWr(Verbs.CTRL, SEND_TAG | seq, signalFlag(signaled) | IbvSendWR.IBV_SEND_INLINE);
            verbs.postSend(Verbs.CTRL);
            return seq;
        } finally {
            sendLock.unlock();
        }
    }

    /** How long a NO may take to leave before its connection is dropped (bounded: the peer falls back anyway). */
    static final long NO_SEND_WAIT_NANOS = 200_000_000L;

    /**
     * Sends NO with {@code reason} and lets it complete, at most {@link #NO_SEND_WAIT_NANOS}; the caller then
     * drops the connection. Failures are ignored: the peer sees the connection drop either way.
     */
    void sendNo(String reason) {
        try {
            long seq = postMessage(new RdmaWire.No(reason));
            long deadline = System.nanoTime() + NO_SEND_WAIT_NANOS;
            while (completedUpTo() < seq && System.nanoTime() - deadline < 0) {
                if (poll(true) <= 0) Thread.onSpinWait();
            }
        } catch (IOException | RuntimeException e) {
            // the connection is dropped next
        }
    }

    /** Sends a pairing message (signaled); each uses its own area of the buffer, so none is overwritten in flight. */
    long postMessage(RdmaWire.Message m) throws IOException {
        sendLock.lock();
        try {
            if (msgAreasUsed >= MSG_AREAS) throw new IOException("more than " + MSG_AREAS + " pairing messages on one connection");
            awaitRoom();
            long seq = nextSeq();
            int offset = OUT_OFFSET + msgAreasUsed++ * RdmaWire.SLOT_SIZE;
            int length = RdmaWire.encode(m, control, offset);
            verbs.setSge(Verbs.MSG, controlMr.address() + offset, length);
            verbs.setWr(Verbs.MSG, SEND_TAG | seq, signalFlag(true));
            verbs.postSend(Verbs.MSG);
            return seq;
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * The next send sequence number; throws once destroyed. Every post calls it, with the send lock
     * held, before it touches its work request: {@link #destroy()} sets {@code destroyed} under the
     * same lock before the verbs free the requests, so a post racing a close fails with this
     * IOException and never writes into a freed request (a NullPointerException in DiSNI).
     */
    private long nextSeq() throws IOException {
        if (destroyed) throw new IOException("RDMA connection released");
        return ++posted;
    }

    /** Signals every {@link #SIGNAL_EVERY}th request, so the send queue can be reaped with few completions. */
    private int signalFlag(boolean force) {
        if (force || posted - lastSignaled >= SIGNAL_EVERY) {
            lastSignaled = posted;
            return IbvSendWR.IBV_SEND_SIGNALED;
        }
        return 0;
    }

    /** Waits (polling) until the send queue has room; a failing QP flushes its requests, so this ends. */
    private void awaitRoom() throws IOException {
        for (int i = 0; posted - completedUpTo >= SQ_DEPTH - 2; i++) {
            if (destroyed) throw new IOException("RDMA connection released");
            int n = poll(true);
            // a poll that failed fails again: waiting on would spin for good
            if (n < 0) throw new IOException(destroyed ? "RDMA connection released" : "RDMA completion queue poll failed");
            if (n == 0 && i > 64) LockSupport.parkNanos(20_000L);
        }
    }

    long completedUpTo() {
        return completedUpTo;
    }

    /** Messages posted so far (data, CTRL and pairing): each took one of the peer's posted receives. */
    long posted() {
        return posted;
    }

    /** Receives posted again after their completion so far: the slot credits this side can return. */
    long reposted() {
        return reposted;
    }

    // ---------------------------------------------------------------- completions

    /**
     * Polls the CQ once, handing completions to the {@link Completions}. With {@code block} false the
     * call returns 0 at once when another thread is polling.
     *
     * @return completions handled, or -1 once destroyed
     */
    int poll(boolean block) {
        if (block) {
            pollLock.lock();
        } else if (!pollLock.tryLock()) {
            return 0;
        }
        try {
            if (destroyed) return -1;
            int n;
            try {
                n = verbs.poll(WC_BATCH);
            } catch (IOException e) {
                completions.onFailure(-1, 0, false);
                return -1;
            }
            for (int i = 0; i < n; i++) dispatch(i);
            return n;
        } finally {
            pollLock.unlock();
        }
    }

    private void dispatch(int i) {
        long wrId = verbs.wrId(i);
        boolean send = (wrId & SEND_TAG) != 0;
        if (send) {
            long seq = wrId & ~SEND_TAG;
            if (seq > completedUpTo) completedUpTo = seq;
        }
        int status = verbs.status(i);
        if (status != STATUS_OK) {
            completions.onFailure(status, wrId, send);
            return;
        }
        if (send) return;
        int slot = (int) wrId;
        int opcode = verbs.opcode(i);
        if (opcode == OP_RECV_IMM) {
            completions.onData(verbs.byteLen(i));
        } else if (opcode == OP_RECV) {
            completions.onMessage(control, slot * RdmaWire.SLOT_SIZE, verbs.byteLen(i));
        }
        try {
            verbs.postRecv(slot);
            reposted = reposted + 1; // single writer: the poll lock holder
        } catch (IOException e) {
            completions.onFailure(-2, wrId, false);
        }
    }

    /** Requests a completion event for the next completion (ibv_req_notify_cq). */
    void arm() throws IOException {
        pollLock.lock();
        try {
            if (!destroyed) verbs.arm();
        } finally {
            pollLock.unlock();
        }
    }

    /**
     * Waits up to {@code timeoutMillis} for a completion event and acknowledges it; false on timeout.
     * Only with the event lock held ({@link #enterEvents}, {@link #tryEnterEvents}).
     */
    boolean awaitEvent(int timeoutMillis) throws IOException {
        if (destroyed) return false;
        return verbs.awaitEvent(timeoutMillis);
    }

    /** Takes the right to arm and wait on the completion channel, waiting for the thread that has it. */
    void enterEvents() {
        eventLock.lock();
    }

    /** Takes the right to arm and wait on the completion channel if nobody has it; false if somebody does. */
    boolean tryEnterEvents() {
        return eventLock.tryLock();
    }

    void leaveEvents() {
        eventLock.unlock();
    }

    /**
     * Disconnects the RDMA connection (the CM id stays; its owner destroys it). Never once the queue
     * pair is destroyed, nor while {@link #destroy()} frees it: rdma_disconnect moves the id's QP to
     * the error state, and a QP freed under it by the completion thread crashed the JVM (SIGSEGV in
     * libibverbs, the CM thread disconnecting on DISCONNECTED while the completion thread destroyed).
     */
    void disconnect() throws IOException {
        synchronized (lifecycle) {
            if (destroyed) return;
            verbs.disconnect();
        }
    }

    void traceQp(String state, String detail) {
        if (tracer.isOn(Category.JSOR)) tracer.event(Hook.QP_STATE, conn, "rdma", null, state + " " + detail);
    }

    // ---------------------------------------------------------------- teardown

    /**
     * Releases every verbs resource ({@link Verbs#destroy()}), once no thread waits on the completion
     * channel (the event lock: a reader waiting there directly leaves on the next completion, and the
     * disconnect before a release flushes every posted receive, or at the end of its bounded wait).
     * Idempotent.
     */
    void destroy() {
        eventLock.lock(); // held to the end: a thread that then takes it finds the pair destroyed
        try {
            sendLock.lock(); // the order of awaitRoom (send lock, then poll lock)
            pollLock.lock();
            try {
                if (destroyed) return;
                destroyed = true;
            } finally {
                pollLock.unlock();
                sendLock.unlock();
            }
            int qpNum = verbs.qpNum();
            synchronized (lifecycle) {
                verbs.destroy();
            }
            traceQp("DESTROYED", "qp_num=" + qpNum);
        } finally {
            eventLock.unlock();
        }
    }

    boolean isDestroyed() {
        return destroyed;
    }
}
