package io.sora.transport.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.SVCReqNotify;
import com.ibm.disni.verbs.StatefulVerbCall;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection's verbs resources on a CM id: protection domain, completion channel, one CQ for
 * both directions, an RC queue pair, the registered control buffer ({@link #SLOTS} receive slots plus
 * an outgoing area), and, once the rings are known, the receive ring and the send shadow ring. Every
 * work request is built once as a DiSNI stateful call and re-executed with only addresses, lengths,
 * ids and flags changed, so the data path allocates nothing.
 *
 * <p>Threading: posts are serialised by a send lock, CQ polling by a poll lock (never taken in the
 * other order), so any thread may post or poll. {@link #destroy()} takes both and marks the object
 * dead, after which posts throw and polls return -1.
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
    final RdmaCmId id;
    private final Tracer tracer;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock pollLock = new ReentrantLock();
    private final List<StatefulVerbCall<?>> calls = new ArrayList<>();
    private final List<IbvMr> mrs = new ArrayList<>();
    private IbvPd pd;
    private IbvCompChannel channel;
    private IbvCQ cq;
    private IbvQP qp;
    private final ByteBuffer control = ByteBuffer.allocateDirect(CONTROL_SIZE);
    private IbvMr controlMr;
    private final SVCPostRecv[] recvCalls = new SVCPostRecv[SLOTS];
    private final IbvWC[] wcs = new IbvWC[WC_BATCH];
    private SVCPollCq pollCall;
    private SVCReqNotify armCall;
    private SVCPostSend msgCall;
    private SVCPostSend.SendWRMod msgMod;
    private SVCPostSend ctrlCall;
    private SVCPostSend.SendWRMod ctrlMod;
    private SVCPostSend dataCall;
    private SVCPostSend.SendWRMod dataMod;
    private SVCPostSend.SgeMod dataSge;
    private SVCPostSend.RdmaMod dataRdma;
    private long shadowAddress;
    private long remoteRing;
    private int msgAreasUsed;
    /** Send sequence; guarded by sendLock. */
    private long posted;
    private long lastSignaled;
    private volatile long completedUpTo;
    private volatile boolean destroyed;
    private Completions completions;

    /** Creates PD, channel, CQ and QP on {@code id} (address resolved or connect request) and posts every receive. */
    QueuePair(RdmaCmId id, long conn, Tracer tracer) throws IOException {
        this.id = id;
        this.conn = conn;
        this.tracer = tracer;
        try {
            IbvContext context = id.getVerbs();
            if (context == null) throw new IOException("CM id has no device context (address not resolved)");
            pd = context.allocPd();
            channel = context.createCompChannel();
            cq = context.createCQ(channel, CQ_DEPTH, 0);
            IbvQPInitAttr attr = new IbvQPInitAttr();
            attr.cap().setMax_send_wr(SQ_DEPTH);
            attr.cap().setMax_recv_wr(SLOTS);
            attr.cap().setMax_send_sge(1);
            attr.cap().setMax_recv_sge(1);
            attr.cap().setMax_inline_data(MAX_INLINE);
            attr.setQp_type(IbvQP.IBV_QPT_RC);
            attr.setSend_cq(cq);
            attr.setRecv_cq(cq);
            qp = id.createQP(pd, attr);
            if (qp == null) throw new IOException("rdma_create_qp returned no queue pair");
            traceQp("INIT", "qp_num=" + qp.getQp_num() + " sq=" + SQ_DEPTH + " rq=" + SLOTS + " cq=" + CQ_DEPTH);
            controlMr = register(control, IbvMr.IBV_ACCESS_LOCAL_WRITE, "control");
            for (int i = 0; i < WC_BATCH; i++) wcs[i] = new IbvWC();
            pollCall = track(cq.poll(wcs, WC_BATCH));
            armCall = track(cq.reqNotification(false));
            for (int i = 0; i < SLOTS; i++) {
                IbvRecvWR wr = new IbvRecvWR();
                wr.setWr_id(i);
                wr.setSg_list(sges(controlMr.getAddr() + (long) i * RdmaWire.SLOT_SIZE, RdmaWire.SLOT_SIZE, controlMr.getLkey()));
                List<IbvRecvWR> one = new ArrayList<>(1);
                one.add(wr);
                recvCalls[i] = track(qp.postRecv(one, null));
                recvCalls[i].execute();
            }
            msgCall = track(qp.postSend(List.of(sendWr(IbvSendWR.IBV_WR_SEND, controlMr.getAddr() + OUT_OFFSET,
                    RdmaWire.SLOT_SIZE, controlMr.getLkey())), null));
            msgMod = msgCall.getWrMod(0);
            ctrlCall = track(qp.postSend(List.of(sendWr(IbvSendWR.IBV_WR_SEND, controlMr.getAddr() + CTRL_OFFSET,
                    RdmaWire.CTRL_SIZE, controlMr.getLkey())), null));
            ctrlMod = ctrlCall.getWrMod(0);
        } catch (IOException | RuntimeException e) {
            destroy();
            throw e;
        }
    }

    private static IbvSendWR sendWr(int opcode, long addr, int length, int lkey) {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(opcode);
        wr.setSend_flags(0);
        wr.setSg_list(sges(addr, length, lkey));
        return wr;
    }

    private static LinkedList<IbvSge> sges(long addr, int length, int lkey) {
        IbvSge sge = new IbvSge();
        sge.setAddr(addr);
        sge.setLength(length);
        sge.setLkey(lkey);
        LinkedList<IbvSge> list = new LinkedList<>();
        list.add(sge);
        return list;
    }

    private <T extends StatefulVerbCall<?>> T track(T call) {
        calls.add(call);
        return call;
    }

    void setCompletions(Completions completions) {
        this.completions = completions;
    }

    /** Registers {@code buffer} (direct) with {@code access}; traced as MR_REGISTER with its size and keys. */
    IbvMr register(ByteBuffer buffer, int access, String what) throws IOException {
        SVCRegMr call = pd.regMr(buffer, access).execute();
        IbvMr mr = call.getMr();
        call.free();
        mrs.add(mr);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.MR_REGISTER, conn, "rdma", null, what + " bytes=" + buffer.capacity() + " lkey=" + mr.getLkey()
                    + " rkey=" + mr.getRkey() + " access=" + access + " rc=0");
        }
        return mr;
    }

    /** The registered control buffer, for tests of the message layout. */
    ByteBuffer control() {
        return control;
    }

    // ---------------------------------------------------------------- sending

    /** Builds the data work request: RDMA WRITE WITH IMM from the shadow ring into the peer's ring. */
    void prepareData(IbvMr shadowMr, long remoteRingAddress, int remoteRkey) throws IOException {
        IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, shadowMr.getAddr(), 1, shadowMr.getLkey());
        wr.setImm_data(0);
        wr.getRdma().setRemote_addr(remoteRingAddress);
        wr.getRdma().setRkey(remoteRkey);
        sendLock.lock();
        try {
            dataCall = track(qp.postSend(List.of(wr), null));
            dataMod = dataCall.getWrMod(0);
            dataSge = dataMod.getSgeMod(0);
            dataRdma = dataMod.getRdmaMod();
            shadowAddress = shadowMr.getAddr();
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
            dataSge.setAddr(shadowAddress + offset);
            dataSge.setLength(length);
            dataRdma.setRemote_addr(remoteRing + offset);
            dataMod.setWr_id(SEND_TAG | nextSeq());
            dataMod.setSend_flags(signalFlag(false));
            dataCall.execute();
        } finally {
            sendLock.unlock();
        }
    }

    /** Sends a CTRL message inline; returns its sequence number (completed when {@link #completedUpTo()} reaches it). */
    long postCtrl(long consumed, int flags, boolean signaled) throws IOException {
        sendLock.lock();
        try {
            awaitRoom();
            RdmaWire.encodeCtrl(control, CTRL_OFFSET, consumed, flags);
            long seq = nextSeq();
            ctrlMod.setWr_id(SEND_TAG | seq);
            ctrlMod.setSend_flags(signalFlag(signaled) | IbvSendWR.IBV_SEND_INLINE);
            ctrlCall.execute();
            return seq;
        } finally {
            sendLock.unlock();
        }
    }

    /** Sends a pairing message (signaled); each uses its own area of the buffer, so none is overwritten in flight. */
    long postMessage(RdmaWire.Message m) throws IOException {
        sendLock.lock();
        try {
            if (msgAreasUsed >= MSG_AREAS) throw new IOException("more than " + MSG_AREAS + " pairing messages on one connection");
            int offset = OUT_OFFSET + msgAreasUsed++ * RdmaWire.SLOT_SIZE;
            int length = RdmaWire.encode(m, control, offset);
            awaitRoom();
            long seq = nextSeq();
            msgMod.getSgeMod(0).setAddr(controlMr.getAddr() + offset);
            msgMod.getSgeMod(0).setLength(length);
            msgMod.setWr_id(SEND_TAG | seq);
            msgMod.setSend_flags(signalFlag(true));
            msgCall.execute();
            return seq;
        } finally {
            sendLock.unlock();
        }
    }

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
            if (poll(true) == 0 && i > 64) LockSupport.parkNanos(20_000L);
        }
    }

    long completedUpTo() {
        return completedUpTo;
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
                n = pollCall.execute().getPolls();
            } catch (IOException e) {
                completions.onFailure(-1, 0, false);
                return -1;
            }
            for (int i = 0; i < n; i++) dispatch(wcs[i]);
            return n;
        } finally {
            pollLock.unlock();
        }
    }

    private void dispatch(IbvWC wc) {
        long wrId = wc.getWr_id();
        boolean send = (wrId & SEND_TAG) != 0;
        if (send) {
            long seq = wrId & ~SEND_TAG;
            if (seq > completedUpTo) completedUpTo = seq;
        }
        if (wc.getStatus() != STATUS_OK) {
            completions.onFailure(wc.getStatus(), wrId, send);
            return;
        }
        if (send) return;
        int slot = (int) wrId;
        if (wc.getOpcode() == OP_RECV_IMM) {
            completions.onData(wc.getByte_len());
        } else if (wc.getOpcode() == OP_RECV) {
            completions.onMessage(control, slot * RdmaWire.SLOT_SIZE, wc.getByte_len());
        }
        try {
            recvCalls[slot].execute();
        } catch (IOException e) {
            completions.onFailure(-2, wrId, false);
        }
    }

    /** Requests a completion event for the next completion (ibv_req_notify_cq). */
    void arm() throws IOException {
        pollLock.lock();
        try {
            if (!destroyed) armCall.execute();
        } finally {
            pollLock.unlock();
        }
    }

    /** Waits up to {@code timeoutMillis} for a completion event and acknowledges it; false on timeout. */
    boolean awaitEvent(int timeoutMillis) throws IOException {
        if (destroyed) return false;
        if (!channel.getCqEvent(cq, timeoutMillis)) return false;
        cq.ackEvents(1);
        return true;
    }

    void traceQp(String state, String detail) {
        if (tracer.isOn(Category.JSOR)) tracer.event(Hook.QP_STATE, conn, "rdma", null, state + " " + detail);
    }

    // ---------------------------------------------------------------- teardown

    /**
     * Releases QP, CQ, channel, registrations and PD, in that order (each step traced with its return
     * code when it fails). Must be called by the thread that waits on the completion channel, or when
     * nobody does. Registered buffers stay valid Java memory; only their registrations go. Idempotent.
     */
    void destroy() {
        pollLock.lock();
        sendLock.lock();
        try {
            if (destroyed) return;
            destroyed = true;
        } finally {
            sendLock.unlock();
            pollLock.unlock();
        }
        if (qp != null) {
            step("rdma_destroy_qp", () -> id.destroyQP());
            traceQp("DESTROYED", "qp_num=" + qpNum());
        }
        for (StatefulVerbCall<?> c : calls) {
            if (c.isValid()) c.free();
        }
        if (cq != null) step("ibv_destroy_cq", () -> cq.destroyCQ());
        if (channel != null) step("ibv_destroy_comp_channel", () -> channel.destroyCompChannel());
        for (IbvMr mr : mrs) {
            int rc = 0;
            try {
                mr.deregMr().execute().free();
            } catch (IOException | RuntimeException e) {
                rc = -1;
            }
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.MR_DEREGISTER, conn, "rdma", null, "bytes=" + mr.getLength() + " rkey=" + mr.getRkey() + " rc=" + rc);
            }
        }
        if (pd != null) step("ibv_dealloc_pd", () -> RdmaVerbs.open().deallocPd(pd));
    }

    private int qpNum() {
        try {
            return qp.getQp_num();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private interface Step {
        int run() throws IOException;
    }

    private void step(String what, Step s) {
        int rc;
        try {
            rc = s.run();
        } catch (IOException | RuntimeException e) {
            rc = -1;
        }
        if (rc != 0 && tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.QP_STATE, conn, "rdma", what + " failed rc=" + rc, null);
        }
    }

    boolean isDestroyed() {
        return destroyed;
    }
}
