package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import io.sora.transport.Pairing;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.MessageDigest;

/**
 * The server side of one RDMA connection from its CONNECT_REQUEST on: the medium, the client's HELLO,
 * and once the binding offers, the {@link Pairing} it belongs to and the OFFER's secret. It takes the
 * connection's pairing messages (completion thread) and its CM events (the listener's thread) for its
 * whole life: DISCONNECTED after COMMIT is the medium's peer-death signal.
 *
 * <p>Order: whatever ends a pairing from outside the completion thread (DISCONNECTED, the CM loop
 * failing) goes through the medium's inbox, behind the pairing messages polled before it, and reaches
 * {@link #onBroken} on the completion thread: a client that committed, wrote and closed before the
 * server handled its COMMIT is paired, not aborted, however the CM's and the CQ's events interleave.
 */
final class RdmaLink implements RdmaMedium.PairingListener, CmLoop.Handler {
    final long id;
    /** Null in tests (fake verbs, no CM). */
    final RdmaCmId cmId;
    final RdmaMedium medium;
    private final RdmaServerBinding binding;
    private volatile InetSocketAddress peer;
    private volatile RdmaWire.Hello hello;
    private volatile byte[] secret;
    /** Set when the binding begins its offer; guarded by this. */
    private Pairing<RdmaLink> pairing;
    /** Why the connection failed before a pairing took it over; guarded by this. */
    private String failure;
    /** The offer's proof check, made with its secret ({@link #offering}); null before. */
    private volatile ProofCheck proof;
    /** The inode of the TCP connection's socket when the request was checked (0: not yet accepted; -1: unknown). */
    private volatile long serverInode = -1;

    RdmaLink(long id, RdmaCmId cmId, RdmaMedium medium, RdmaServerBinding binding) {
        this.id = id;
        this.cmId = cmId;
        this.medium = medium;
        this.binding = binding;
    }

    @Override
    public long conn() {
        return id;
    }

    // ---- CM thread ----

    @Override
    public void onCmEvent(EventType type, RdmaCmEvent event) {
        if (type == EventType.RDMA_CM_EVENT_ESTABLISHED) {
            InetSocketAddress destination;
            try {
                destination = (InetSocketAddress) cmId.getDestination();
            } catch (IOException | RuntimeException e) {
                destination = null;
            }
            established(destination);
        } else if (type == EventType.RDMA_CM_EVENT_DISCONNECTED) {
            disconnected();
        } else if (type == EventType.RDMA_CM_EVENT_DEVICE_REMOVAL) {
            // the device went (rdma link delete, a driver unloaded): the connection is dead; left alone, a
            // reader of it waited for good (found in review, 2026-11-28)
            medium.onCmGone("RDMA device removed (RDMA_CM_EVENT_DEVICE_REMOVAL)");
        } else if (type == EventType.RDMA_CM_EVENT_CONNECT_ERROR || type == EventType.RDMA_CM_EVENT_UNREACHABLE
                || type == EventType.RDMA_CM_EVENT_REJECTED) {
            fail("RDMA connection failed: " + type.name());
            medium.abort();
        }
    }

    /**
     * The listener's CM loop ended on an error: this pairing cannot complete (a committed connection
     * lives on). Queued as the medium's other breaks are, so a COMMIT already polled is handled first.
     */
    @Override
    public void onLoopFailed(String reason) {
        medium.pairingFailed(reason);
    }

    /** ESTABLISHED: the connection is up, from the RDMA address {@code peer} (null if unknown). */
    void established(InetSocketAddress peer) {
        this.peer = peer;
        medium.qp.traceQp("RTS", "accepted from " + peer);
    }

    /**
     * DISCONNECTED: the client dropped the connection (or died); a committed connection reads to EOF.
     * The pairing is not failed here: the medium queues the break behind the messages already in the
     * CQ, and a COMMIT among them commits the pairing first ({@link #onBroken}, on the completion thread).
     */
    void disconnected() {
        medium.onCmGone("peer disconnected (RDMA_CM_EVENT_DISCONNECTED)");
    }

    /** The RDMA address the client connected from: from ESTABLISHED, else asked of the CM id. */
    InetSocketAddress peer() throws IOException {
        InetSocketAddress p = peer;
        if (p == null && cmId != null) p = (InetSocketAddress) cmId.getDestination();
        return p;
    }

    // ---- completion thread ----

    @Override
    public void onMessage(RdmaWire.Message m) {
        if (m instanceof RdmaWire.Hello h && hello == null) {
            hello = h;
            binding.request(this, h);
        } else if (m instanceof RdmaWire.Commit c) {
            committed(c.secret());
        } else if (m instanceof RdmaWire.No no && hello != null) {
            // the client gives the pairing up without writing the proof (docs/rdma.md, "Proof of the TCP connection")
            ProofCheck p = proof;
            if (p != null) p.declined(no.reason());
            fail("the client gave the offer up: " + no.reason());
        } else {
            fail("unexpected pairing message " + m.getClass().getSimpleName());
            medium.abort();
        }
    }

    @Override
    public void onBroken(String why) {
        fail(why);
    }

    RdmaWire.Hello hello() {
        return hello;
    }

    /**
     * The binding's offer begins: from now on the pairing decides what a failure does. False when the
     * connection failed before (the caller aborts the pairing).
     */
    boolean offering(Pairing<RdmaLink> pairing, byte[] secret) {
        this.proof = new ProofCheck(secret, id, describePeer(), serverInode, binding);
        this.secret = secret;
        synchronized (this) {
            this.pairing = pairing;
            return failure == null;
        }
    }

    /** The pairing the binding's offer began, or null. */
    synchronized Pairing<RdmaLink> pairing() {
        return pairing;
    }

    void serverInode(long inode) {
        serverInode = inode;
    }

    /** The offer's proof check; null before the binding's offer. */
    ProofCheck proof() {
        return proof;
    }

    /** The RDMA peer's address, for messages. */
    private String describePeer() {
        try {
            InetSocketAddress p = peer();
            return p == null ? "(address unknown)" : p.getAddress().getHostAddress() + ":" + p.getPort();
        } catch (IOException | RuntimeException e) {
            return "(address unknown)";
        }
    }

    /** Why the connection failed before the offer, or null. */
    synchronized String failure() {
        return failure;
    }

    private void committed(byte[] echo) {
        Pairing<RdmaLink> p;
        synchronized (this) {
            p = pairing;
        }
        byte[] s = secret;
        if (p != null && s != null && MessageDigest.isEqual(s, echo) && p.committed()) {
            medium.paired();
        } else {
            fail("COMMIT without a matching OFFER");
        }
    }

    /**
     * The connection cannot pair: a pairing under way is aborted (which releases the connection; a
     * committed one lives on), a connection without one is dropped.
     */
    private void fail(String why) {
        Pairing<RdmaLink> p;
        synchronized (this) {
            if (failure == null) failure = why;
            p = pairing;
        }
        if (p != null) {
            p.abort(why);
        } else {
            medium.abort();
        }
    }
}
