package io.sora.transport.disni;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.transport.PairingResult;
import io.sora.transport.Settlement;
import io.sora.transport.SocketHooks;
import io.sora.transport.TcpConnection;
import java.io.IOException;
import java.time.Duration;

/**
 * The accept's look at the TCP connection of a pairing an OFFER may have gone out for (docs/rdma.md,
 * "Proof of the TCP connection"): the RDMA peer proves it owns the TCP connection by having written the
 * OFFER's secret on it, which only the connection's owner can. The pairing table runs it once, in the
 * accept that claimed the pairing or met its end ({@link Settlement}). Small on purpose: a TCP mark keeps
 * it up to a minute, and it holds none of the connection's buffers.
 *
 * <ul>
 *   <li>Paired, the proof at the front of the TCP stream: the proof is taken; paired.</li>
 *   <li>Paired, anything else there: the RDMA peer is not the connection's client (a pairing request for
 *       someone else's connection): its connection is dropped, the application gets the TCP connection
 *       with nothing taken.</li>
 *   <li>Not paired, the client's NO received (it wrote no proof), or other bytes there: TCP as it stands.</li>
 *   <li>Not paired, the proof there: taken, and the connection shut down (its client may believe it paired).</li>
 *   <li>No bytes within the bound, either way: the connection is shut down, since a proof arriving later
 *       would reach the application.</li>
 * </ul>
 */
final class ProofCheck implements Settlement {
    /** The least time an accept waits for the proof of an offered connection (as for its COMMIT). */
    static final long MIN_WAIT_NANOS = 2_000_000_000L;
    /** How often a look at an unpaired connection stops to see whether the client's NO came meanwhile. */
    private static final int UNPAIRED_SLICE_MILLIS = 20;
    /** A paired one's slices: nothing to see between them, but a bounded poll each. */
    private static final int PAIRED_SLICE_MILLIS = 100;

    private final byte[] proof;
    private final long conn;
    private final String peer;
    private final RdmaServerBinding binding;
    /** Set under the pairing's lock just before the OFFER is posted; cleared if the post failed. */
    private volatile boolean offerMayBeOut;
    /** The client's reason when it gave the pairing up without writing the proof (its NO), or null. */
    private volatile String declined;
    /** Set by the one accept that runs it (the table hands it to one; two racing accepts of a reused four-tuple cannot both look). */
    private final java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();

    /** The named connection's socket inode when its request was checked: 0 not yet accepted, -1 unknown. */
    private final long inode;

    ProofCheck(byte[] secret, long conn, String peer, long inode, RdmaServerBinding binding) {
        this.inode = inode;
        this.proof = RdmaWire.proof(secret);
        this.conn = conn;
        this.peer = peer;
        this.binding = binding;
    }

    void offerMayBeOut(boolean out) {
        offerMayBeOut = out;
    }

    void declined(String reason) {
        declined = reason;
    }

    /** What the front of the TCP stream showed. */
    private enum Front { PROOF, OTHER, NOTHING }

    @Override
    public PairingResult settle(PairingResult r, SocketHooks hooks, Duration wait) {
        if (!offerMayBeOut) return r; // no OFFER went out: nothing of sora's can come on the TCP stream
        TcpConnection tcp = hooks.tcp();
        if (inode > 0 && tcp != null) {
            // the request named a connection accepted already: if it is not this accept's (a later connection
            // reusing its four-tuple, whose accept found the mark), nothing of this pairing is on this one
            long mine = tcp.inode();
            if (mine > 0 && mine != inode) {
                if (!(r instanceof PairingResult.Paired p)) return r;
                // claimed by a later connection's accept (the earlier one closed, its four-tuple reused while the
                // pairing waited): the RDMA peer named another connection, so this one is not paired with it
                try {
                    p.connection().close();
                } catch (IOException | RuntimeException e) {
                    // released either way
                }
                String why = "the pairing request of RDMA peer " + peer + " named an earlier connection with this"
                        + " four-tuple, not this one";
                if (binding.tracer().isOn(Category.JSOR)) binding.tracer().event(Hook.CM_EVENT, conn, "rdma", why, null);
                return new PairingResult.Fallback(why);
            }
        }
        if (!ran.compareAndSet(false, true)) return r; // another accept looked at its own connection for it
        boolean paired = r instanceof PairingResult.Paired;
        if (!paired && declined != null) return r;
        long bound = binding.proofWaitNanos() > 0 ? binding.proofWaitNanos() : Math.max(MIN_WAIT_NANOS, 10 * wait.toNanos());
        // a committed client wrote its proof before its COMMIT: it is there or on its way, whatever the thread's
        // interrupt status; an accept interrupted before the COMMIT looks once, without waiting
        if (!paired && Thread.currentThread().isInterrupted()) bound = 0;
        Front front;
        String error = null;
        try {
            front = tcp == null ? Front.NOTHING : look(tcp, paired, bound);
            if (front == Front.PROOF) tcp.discard(RdmaWire.PROOF_SIZE);
        } catch (IOException e) {
            front = Front.NOTHING;
            error = e.getMessage();
        }
        if (paired && front == Front.PROOF) return r;
        if (!paired && (front == Front.OTHER || declined != null || !offerMayBeOut)) return r;
        if (paired) {
            try {
                ((PairingResult.Paired) r).connection().close(); // the RDMA peer sees its connection drop
            } catch (IOException | RuntimeException e) {
                // released either way
            }
        }
        String why;
        if (paired && front == Front.OTHER) {
            why = "the RDMA peer " + peer + " did not prove it owns the TCP connection (its first bytes on TCP are"
                    + " not the pairing's proof: a pairing request for another's connection?)";
        } else {
            why = (paired ? "paired" : ((PairingResult.Fallback) r).reason()) + "; "
                    + (front == Front.PROOF ? "its client had written the pairing's proof on the TCP connection"
                       : tcp == null ? "the TCP connection cannot be reached to look for the pairing's proof"
                       : error != null ? "looking for the pairing's proof failed: " + error
                       : "no pairing proof nor other bytes on the TCP connection within " + bound / 1_000_000 + " ms")
                    + ": the connection is shut down (a proof arriving later would reach the application)";
            if (tcp != null) {
                tcp.shutdown();
            } else {
                try {
                    hooks.closeSocket(); // the only way left to keep a late proof from the application
                } catch (IOException | RuntimeException e) {
                    // closed already
                }
            }
        }
        if (binding.tracer().isOn(Category.JSOR)) binding.tracer().event(Hook.CM_EVENT, conn, "rdma", why, null);
        return new PairingResult.Fallback(why);
    }

    /**
     * Looks at the front of {@code tcp} until it shows the whole proof, anything else, or its end, at most
     * {@code boundNanos}; for an unpaired connection in slices, so that the client's NO received meanwhile
     * ends the look.
     */
    private Front look(TcpConnection tcp, boolean paired, long boundNanos) throws IOException {
        long deadline = System.nanoTime() + boundNanos;
        byte[] seen = new byte[proof.length];
        int n = 0;
        for (;;) {
            long left = deadline - System.nanoTime();
            int slice = (int) Math.max(0, Math.min(left / 1_000_000L, paired ? PAIRED_SLICE_MILLIS : UNPAIRED_SLICE_MILLIS));
            // the first byte decides most (a plain client's request is not "SORP"): wait for one, then for the rest
            n = tcp.peek(seen, n == 0 ? 1 : proof.length, slice);
            if (n < 0) return Front.NOTHING; // the end, nothing sent
            for (int i = 0; i < n; i++) {
                if (seen[i] != proof[i]) return Front.OTHER;
            }
            if (n == proof.length) return Front.PROOF;
            if (tcp.ended() || left <= 0) return Front.NOTHING;
            if (!paired && (declined != null || !offerMayBeOut)) return Front.NOTHING;
        }
    }
}
