package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.RingConnection;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The RDMA CM listen of one {@link RdmaServerBinding}, as {@link io.sora.transport.disni} has no
 * rendezvous socket: an RDMA CM id listening on the server socket's port, and its event thread
 * {@code sora-rdma-listen-<port>}, which accepts every CONNECT_REQUEST with a fresh queue pair and
 * hands the connection to the binding (which pairs it when its HELLO arrives). The thread also
 * delivers each connection's later CM events to its {@link RdmaLink}.
 */
final class RdmaListener {
    private final RdmaServerBinding binding;
    private final Tracer tracer;
    private final CmLoop loop;
    private final RdmaCmId listenId;

    RdmaListener(RdmaServerBinding binding, InetSocketAddress listenAddress, int port, Tracer tracer) throws IOException {
        this.binding = binding;
        this.tracer = tracer;
        this.loop = new CmLoop("sora-rdma-listen-" + port, tracer, new CmLoop.Handler() {
            @Override
            public void onCmEvent(EventType type, RdmaCmEvent event) {
                onRequest(type, event);
            }

            @Override
            public void onLoopFailed(String reason) {
                binding.listenerFailed(reason); // its accepts waited for requests that could not come
            }
        }, 500);
        RdmaCmId id = null;
        try {
            id = loop.createId();
            id.bindAddr(listenAddress);
            id.listen(128);
        } catch (IOException | RuntimeException e) {
            if (id != null) loop.release(id); // before its channel goes with the loop (it leaked, found in review)
            loop.closeWhenIdle();
            throw new IOException("cannot listen for RDMA connections on " + listenAddress + ": " + e.getMessage(), e);
        }
        listenId = id;
    }

    private void onRequest(EventType type, RdmaCmEvent event) {
        RdmaCmId id = event.getConnIdPriv();
        if (binding.isClosed() || id == null) {
            if (id != null) loop.release(id); // destroying a requested id rejects it
            return;
        }
        long conn = RingConnection.nextId();
        RdmaMedium medium = null;
        try {
            QueuePair qp = QueuePair.open(id, conn, tracer);
            medium = new RdmaMedium(conn, qp, tracer);
            RdmaLink link = binding.accepted(conn, medium, id, () -> loop.execute(() -> loop.release(id)));
            loop.register(id, link);
            RdmaConnParam param = new RdmaConnParam();
            param.setRetry_count((byte) 7);
            param.setRnr_retry_count((byte) 7);
            id.accept(param);
        } catch (IOException | RuntimeException e) {
            if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, conn, "rdma", "cannot accept: " + e.getMessage(), null);
            if (medium != null) medium.abort();
            else loop.release(id);
        }
    }

    /** Stops listening: new connection requests are rejected; the port is free for a new listen on return where DiSNI's id map could be made thread-safe (see {@link CmLoop#releaseUnused}). */
    void stop() {
        loop.releaseUnused(listenId);
    }

    /** The event thread ends once the last connection it serves is released. */
    void closeWhenIdle() {
        loop.closeWhenIdle();
    }
}
