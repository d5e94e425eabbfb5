package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import io.sora.transport.ConnectionKey;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.util.function.BiConsumer;

/**
 * Server side of one RDMA connection from its CONNECT_REQUEST until the application's
 * {@code accept()} claims it: CONNECTED (queue pair up, no HELLO yet), OFFERED, then COMMITTED or
 * ABORTED (everything released; the connection is TCP's). Also the CM handler of its id for its
 * whole life (DISCONNECTED is passed to the medium). Thread-safe: the CM thread, the completion
 * thread and the accepting thread all touch it.
 */
final class RdmaPending implements RdmaMedium.PairingListener, CmLoop.Handler {
    enum State { CONNECTED, OFFERED, COMMITTED, ABORTED }

    final long id;
    final RdmaCmId cmId;
    final RdmaMedium medium;
    private final BiConsumer<RdmaPending, RdmaWire.Hello> onHello;
    private final java.util.function.Consumer<RdmaPending> onAbort;
    private State state = State.CONNECTED;
    private ConnectionKey key;
    private byte[] secret;
    private String reason;
    private volatile InetSocketAddress peer;

    RdmaPending(long id, RdmaCmId cmId, RdmaMedium medium, BiConsumer<RdmaPending, RdmaWire.Hello> onHello,
                java.util.function.Consumer<RdmaPending> onAbort) {
        this.id = id;
        this.cmId = cmId;
        this.medium = medium;
        this.onHello = onHello;
        this.onAbort = onAbort;
    }

    @Override
    public long conn() {
        return id;
    }

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
        } else if (type == EventType.RDMA_CM_EVENT_CONNECT_ERROR || type == EventType.RDMA_CM_EVENT_UNREACHABLE
                || type == EventType.RDMA_CM_EVENT_REJECTED) {
            aborted("RDMA connection failed: " + type.name());
            medium.abort();
        }
    }

    /** ESTABLISHED: the connection is up, from the RDMA address {@code peer} (null if unknown). */
    void established(InetSocketAddress peer) {
        this.peer = peer;
        medium.qp.traceQp("RTS", "accepted from " + peer);
    }

    /** DISCONNECTED: the client dropped the connection (or died); a committed connection reads to EOF. */
    void disconnected() {
        medium.onDisconnected("peer disconnected (RDMA_CM_EVENT_DISCONNECTED)");
        aborted("client dropped the RDMA connection before COMMIT");
        try {
            medium.qp.disconnect(); // guarded against the completion thread destroying the QP
        } catch (IOException | RuntimeException e) {
            // disconnected already
        }
    }

    /** The listener's CM loop ended on an error: this pairing cannot complete (a committed connection lives on). */
    @Override
    public void onLoopFailed(String reason) {
        aborted(reason);
        if (state() != State.COMMITTED) medium.abort();
    }

    /** The RDMA address the client connected from, once ESTABLISHED. */
    InetSocketAddress peer() {
        return peer;
    }

    // ---- completion thread ----

    @Override
    public void onMessage(RdmaWire.Message m) {
        if (m instanceof RdmaWire.Hello h && state() == State.CONNECTED && key == null) {
            onHello.accept(this, h);
        } else if (m instanceof RdmaWire.Commit c) {
            committed(c.secret());
        } else {
            aborted("unexpected pairing message " + m.getClass().getSimpleName());
            medium.abort();
        }
    }

    @Override
    public void onBroken(String why) {
        aborted(why);
    }

    synchronized void helloFor(ConnectionKey key) {
        this.key = key;
    }

    synchronized ConnectionKey key() {
        return key;
    }

    /** The OFFER is about to go out; false if aborted meanwhile. */
    synchronized boolean offered(byte[] secret) {
        if (state != State.CONNECTED) return false;
        this.secret = secret;
        state = State.OFFERED;
        return true;
    }

    private void committed(byte[] echo) {
        boolean ok;
        synchronized (this) {
            ok = state == State.OFFERED && MessageDigest.isEqual(secret, echo);
            if (ok) {
                state = State.COMMITTED;
                notifyAll();
            }
        }
        if (ok) {
            medium.paired();
        } else {
            aborted("COMMIT without a matching OFFER");
            medium.abort();
        }
    }

    /** Marks the pairing failed (idempotent; no effect once committed) and tells the binding. */
    void aborted(String why) {
        synchronized (this) {
            if (state == State.COMMITTED || state == State.ABORTED) return;
            reason = why;
            state = State.ABORTED;
            notifyAll();
        }
        onAbort.accept(this);
    }

    /** Waits until COMMITTED or ABORTED, at most {@code nanos}; returns the state then. */
    synchronized State await(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (state == State.CONNECTED || state == State.OFFERED) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            wait(Math.max(1, left / 1_000_000L));
        }
        return state;
    }

    synchronized State state() {
        return state;
    }

    synchronized String reason() {
        return reason;
    }
}
