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

/**
 * {@link Verbs} on DiSNI: protection domain, completion channel, one CQ for both directions and an
 * RC queue pair on an RDMA CM id (address resolved or connect request). Every work request is a
 * DiSNI stateful call built once and re-executed with only addresses, lengths, ids and flags
 * changed, so the data path allocates nothing.
 */
final class DisniVerbs implements Verbs {
    private final RdmaCmId id;
    private final long conn;
    private final Tracer tracer;
    private final List<StatefulVerbCall<?>> calls = new ArrayList<>();
    private final List<IbvMr> mrs = new ArrayList<>();
    private final IbvWC[] wcs;
    private final SVCPostRecv[] recvCalls;
    private final SVCPostSend[] sendCalls = new SVCPostSend[3];
    private final SVCPostSend.SendWRMod[] sendMods = new SVCPostSend.SendWRMod[3];
    private final SVCPostSend.SgeMod[] sendSges = new SVCPostSend.SgeMod[3];
    private SVCPostSend.RdmaMod dataRdma;
    private IbvPd pd;
    private IbvCompChannel channel;
    private IbvCQ cq;
    private IbvQP qp;
    private SVCPollCq pollCall;
    private SVCReqNotify armCall;

    DisniVerbs(RdmaCmId id, long conn, Tracer tracer, int cqDepth, int sqDepth, int rqDepth, int maxInline, int wcBatch)
            throws IOException {
        this.id = id;
        this.conn = conn;
        this.tracer = tracer;
        this.wcs = new IbvWC[wcBatch];
        this.recvCalls = new SVCPostRecv[rqDepth];
        try {
            IbvContext context = id.getVerbs();
            if (context == null) throw new IOException("CM id has no device context (address not resolved)");
            pd = context.allocPd();
            channel = context.createCompChannel();
            cq = context.createCQ(channel, cqDepth, 0);
            IbvQPInitAttr attr = new IbvQPInitAttr();
            attr.cap().setMax_send_wr(sqDepth);
            attr.cap().setMax_recv_wr(rqDepth);
            attr.cap().setMax_send_sge(1);
            attr.cap().setMax_recv_sge(1);
            attr.cap().setMax_inline_data(maxInline);
            attr.setQp_type(IbvQP.IBV_QPT_RC);
            attr.setSend_cq(cq);
            attr.setRecv_cq(cq);
            qp = id.createQP(pd, attr);
            if (qp == null) throw new IOException("rdma_create_qp returned no queue pair");
            for (int i = 0; i < wcBatch; i++) wcs[i] = new IbvWC();
            pollCall = track(cq.poll(wcs, wcBatch));
            armCall = track(cq.reqNotification(false));
        } catch (IOException | RuntimeException e) {
            destroy();
            throw e;
        }
    }

    private <T extends StatefulVerbCall<?>> T track(T call) {
        calls.add(call);
        return call;
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

    @Override
    public Region register(ByteBuffer buffer, int access) throws IOException {
        SVCRegMr call = pd.regMr(buffer, access).execute();
        IbvMr mr = call.getMr();
        call.free();
        mrs.add(mr);
        return new Region(mr.getAddr(), mr.getLength(), mr.getLkey(), mr.getRkey());
    }

    @Override
    public void prepareRecv(int slot, long address, int length, int lkey) throws IOException {
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(slot);
        wr.setSg_list(sges(address, length, lkey));
        List<IbvRecvWR> one = new ArrayList<>(1);
        one.add(wr);
        recvCalls[slot] = track(qp.postRecv(one, null));
    }

    @Override
    public void postRecv(int slot) throws IOException {
        recvCalls[slot].execute();
    }

    @Override
    public void prepareSend(int kind, int opcode, long address, int length, int lkey, long remoteAddress, int rkey)
            throws IOException {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(opcode);
        wr.setSend_flags(0);
        wr.setSg_list(sges(address, length, lkey));
        if (opcode == IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IbvSendWR.IBV_WR_RDMA_WRITE) {
            wr.setImm_data(0);
            wr.getRdma().setRemote_addr(remoteAddress);
            wr.getRdma().setRkey(rkey);
        }
        SVCPostSend call = track(qp.postSend(List.of(wr), null));
        sendCalls[kind] = call;
        sendMods[kind] = call.getWrMod(0);
        sendSges[kind] = sendMods[kind].getSgeMod(0);
        if (kind == DATA) dataRdma = sendMods[kind].getRdmaMod();
    }

    @Override
    public void setSge(int kind, long address, int length) {
        sendSges[kind].setAddr(address);
        sendSges[kind].setLength(length);
    }

    @Override
    public void setRemoteAddress(long remoteAddress) {
        dataRdma.setRemote_addr(remoteAddress);
    }

    @Override
    public void setWr(int kind, long wrId, int sendFlags) {
        sendMods[kind].setWr_id(wrId);
        sendMods[kind].setSend_flags(sendFlags);
    }

    @Override
    public void postSend(int kind) throws IOException {
        sendCalls[kind].execute();
    }

    @Override
    public int poll(int max) throws IOException {
        return pollCall.execute().getPolls();
    }

    @Override
    public long wrId(int i) {
        return wcs[i].getWr_id();
    }

    @Override
    public int status(int i) {
        return wcs[i].getStatus();
    }

    @Override
    public int opcode(int i) {
        return wcs[i].getOpcode();
    }

    @Override
    public int byteLen(int i) {
        return wcs[i].getByte_len();
    }

    @Override
    public void arm() throws IOException {
        armCall.execute();
    }

    @Override
    public boolean awaitEvent(int timeoutMillis) throws IOException {
        if (!channel.getCqEvent(cq, timeoutMillis)) return false;
        cq.ackEvents(1);
        return true;
    }

    @Override
    public void disconnect() throws IOException {
        id.disconnect();
    }

    @Override
    public int qpNum() {
        try {
            return qp == null ? -1 : qp.getQp_num();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Releases QP, CQ, channel, registrations and PD, in that order (each step traced with its return
     * code when it fails). Registered buffers stay valid Java memory; only their registrations go.
     */
    @Override
    public void destroy() {
        if (qp != null) step("rdma_destroy_qp", () -> id.destroyQP());
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
}
