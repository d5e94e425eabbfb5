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
import com.ibm.disni.verbs.SVCRegMr;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * One side of the verbs smoke test: the PD, completion channel, CQ, RC QP and registered buffers
 * created on a connected (or connecting) CM id, with small helpers over DiSNI's stateful calls.
 * Not thread-safe; the smoke test drives both peers from one thread.
 */
final class VerbsPeer {

    static final int CQ_DEPTH = 64;
    static final int ACCESS_ALL = IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE
            | IbvMr.IBV_ACCESS_REMOTE_READ;

    final String name;
    final RdmaCmId id;
    final IbvContext context;
    final IbvPd pd;
    final IbvCompChannel compChannel;
    final IbvCQ cq;
    final IbvQP qp;
    private final IbvWC[] wcs = new IbvWC[CQ_DEPTH];
    private final SVCPollCq poll;
    private final List<IbvMr> mrs = new ArrayList<>();

    VerbsPeer(String name, RdmaCmId id) throws IOException {
        this.name = name;
        this.id = id;
        this.context = id.getVerbs();
        if (context == null) {
            throw new IOException(name + ": CM id has no device context (address not resolved?)");
        }
        this.pd = context.allocPd();
        this.compChannel = context.createCompChannel();
        this.cq = context.createCQ(compChannel, CQ_DEPTH, 0);
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(40);
        attr.cap().setMax_recv_wr(16);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.cap().setMax_inline_data(0);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(cq);
        attr.setRecv_cq(cq);
        this.qp = id.createQP(pd, attr);
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        this.poll = cq.poll(wcs, wcs.length);
    }

    /** Registers a direct buffer with local write and remote read/write access. */
    IbvMr register(ByteBuffer buffer) throws IOException {
        SVCRegMr call = pd.regMr(buffer, ACCESS_ALL).execute();
        IbvMr mr = call.getMr();
        call.free();
        mrs.add(mr);
        return mr;
    }

    /** Posts one receive of the whole registered buffer. */
    void postRecv(IbvMr mr, long wrId) throws IOException {
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges(mr, 0, mr.getLength()));
        List<IbvRecvWR> list = new ArrayList<>();
        list.add(wr);
        qp.postRecv(list, null).execute().free();
    }

    /** A signaled work request over the first {@code length} bytes of {@code mr}. */
    static IbvSendWR sendWr(long wrId, int opcode, IbvMr mr, int length) {
        return sendWr(wrId, opcode, mr, 0, length);
    }

    /** A signaled work request over {@code length} bytes of {@code mr} from {@code offset}. */
    static IbvSendWR sendWr(long wrId, int opcode, IbvMr mr, int offset, int length) {
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setOpcode(opcode);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        wr.setSg_list(sges(mr, offset, length));
        return wr;
    }

    /** Posts the list as one ibv_post_send call (a chain of work requests). */
    void postSend(List<IbvSendWR> wrs) throws IOException {
        qp.postSend(wrs, null).execute().free();
    }

    private static LinkedList<IbvSge> sges(IbvMr mr, int offset, int length) {
        IbvSge sge = new IbvSge();
        sge.setAddr(mr.getAddr() + offset);
        sge.setLength(length);
        sge.setLkey(mr.getLkey());
        LinkedList<IbvSge> list = new LinkedList<>();
        list.add(sge);
        return list;
    }

    /** Busy-polls the CQ until {@code count} completions arrived or the deadline passed. */
    List<IbvWC> pollFor(int count, long deadlineNanos) throws IOException {
        List<IbvWC> got = new ArrayList<>();
        while (got.size() < count && System.nanoTime() < deadlineNanos) {
            drain(got);
            Thread.onSpinWait();
        }
        if (got.size() < count) {
            throw new IOException(name + ": only " + got.size() + " of " + count + " completions before the deadline");
        }
        return got;
    }

    /** Requests a completion event for the next completion (ibv_req_notify_cq). */
    void arm() throws IOException {
        cq.reqNotification(false).execute().free();
    }

    /**
     * Waits through the completion channel until {@code count} completions arrived: get_cq_event
     * (bounded), ack, re-arm, poll. The caller must have {@link #arm armed} the CQ before the
     * completions could arrive. Returns them; {@code eventsTaken[0]} counts the CQ events.
     */
    List<IbvWC> awaitWithEvents(int count, long deadlineNanos, int[] eventsTaken) throws IOException {
        List<IbvWC> got = new ArrayList<>();
        while (got.size() < count) {
            long leftMs = (deadlineNanos - System.nanoTime()) / 1_000_000;
            if (leftMs <= 0 || !compChannel.getCqEvent(cq, (int) Math.min(leftMs, Integer.MAX_VALUE))) {
                throw new IOException(name + ": no CQ event before the deadline (" + got.size() + " of "
                        + count + " completions)");
            }
            eventsTaken[0]++;
            cq.ackEvents(1);
            arm(); // before polling, so a completion landing after the poll raises a new event
            drain(got);
        }
        return got;
    }

    private void drain(List<IbvWC> into) throws IOException {
        int n = poll.execute().getPolls();
        for (int i = 0; i < n; i++) {
            if (wcs[i].getStatus() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
                throw new IOException(name + ": completion wr_id=" + wcs[i].getWr_id() + " failed with status "
                        + IbvWC.IbvWcStatus.valueOf(wcs[i].getStatus()));
            }
            into.add(wcs[i].clone());
        }
    }

    /** Destroys QP, CQ, completion channel, MRs and PD in that order; each must report success. */
    void destroy() throws IOException {
        check("destroyQP", id.destroyQP());
        poll.free();
        check("destroyCQ", cq.destroyCQ());
        check("destroyCompChannel", compChannel.destroyCompChannel());
        for (IbvMr mr : mrs) {
            mr.deregMr().execute().free();
        }
        check("deallocPd", RdmaVerbs.open().deallocPd(pd));
    }

    private void check(String what, int rc) throws IOException {
        if (rc != 0) {
            throw new IOException(name + ": " + what + " returned " + rc);
        }
    }
}
