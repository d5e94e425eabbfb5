package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmId;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.Pairing;
import io.sora.transport.PairingMedium;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.PairingTable;
import io.sora.transport.ProcNetTcp;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The RDMA listener of one bound server socket: its CM listen ({@link RdmaListener}) accepts every
 * connection request with a fresh queue pair; each connection's HELLO, on its completion thread, goes
 * to the medium-neutral {@link PairingTable}, which decides and calls back here for what is RDMA's
 * own: the checks of a request (the key's server, ring size, the RDMA peer is the TCP client, the TCP
 * connection ends here), the offer (register the ring and the send shadow, OFFER with a secret), the
 * refusal (NO, then drop the connection), the release (drop the connection), the connection, and the
 * look at the TCP connection for the client's proof that it owns it ({@link ProofCheck}, the pairing's
 * settlement). {@link #awaitPairing} claims the result for the accepted TCP socket.
 *
 * <p>A sora client makes its RDMA connection before its TCP connect (and sends its HELLO after it), so
 * that connection, from its CONNECT_REQUEST (handled before the CM accepts it, so before the client can
 * see it established and go on to its TCP connect) until its HELLO, is the client's announcement
 * ({@link PairingTable#announced}): an accept whose request is not there waits only while such
 * connections are pending, at most the pairing wait (at least {@code minWaitNanos}, the transport's
 * floor), and with none pending decides TCP at once: a client without sora never waits.
 */
final class RdmaServerBinding implements ServerBinding, PairingMedium<RdmaLink> {
    static final long PROC_CHECK_MILLIS = 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final InetSocketAddress bound;
    private final InetSocketAddress listenAddress;
    private final Tracer tracer;
    private final int spinIterations;
    private final long minWaitNanos;
    private final PairingTable<RdmaLink> table;
    /** Connections not yet claimed by an accept nor released: dropped when the listener closes. */
    private final Set<RdmaLink> unclaimed = ConcurrentHashMap.newKeySet();
    private RdmaListener listener;

    /** Without a CM listen: connections are handed in by {@link #accepted} (tests, over fake verbs). */
    RdmaServerBinding(InetSocketAddress bound, InetSocketAddress listenAddress, AcceptPolicy policy, Tracer tracer,
                      int spinIterations, long minWaitNanos) {
        this(bound, listenAddress, policy, tracer, spinIterations, minWaitNanos, minWaitNanos);
    }

    /** As above; {@code announceTtlNanos}: how long an announced connection makes accepts wait (tests: long). */
    RdmaServerBinding(InetSocketAddress bound, InetSocketAddress listenAddress, AcceptPolicy policy, Tracer tracer,
                      int spinIterations, long minWaitNanos, long announceTtlNanos) {
        this.bound = bound;
        this.listenAddress = listenAddress;
        this.tracer = tracer;
        this.spinIterations = spinIterations;
        this.minWaitNanos = minWaitNanos;
        // an announcement counts as long as the transport's floor for a pairing (seconds under emulation,
        // where a sora client's HELLO can come more than the engine's 1 s after its CONNECT_REQUEST)
        this.table = new PairingTable<>(this, policy, true, announceTtlNanos);
    }

    /** A binding with an RDMA CM listen on {@code listenAddress}. */
    static RdmaServerBinding listen(InetSocketAddress bound, InetSocketAddress listenAddress, AcceptPolicy policy,
                                    Tracer tracer, int spinIterations, long minWaitNanos) throws IOException {
        RdmaServerBinding b = new RdmaServerBinding(bound, listenAddress, policy, tracer, spinIterations, minWaitNanos);
        b.listener = new RdmaListener(b, listenAddress, bound.getPort(), tracer);
        return b;
    }

    InetSocketAddress listenAddress() {
        return listenAddress;
    }

    boolean isClosed() {
        return table.isClosed();
    }

    // ---- the listener's thread ----

    /**
     * A new connection on {@code medium}, from its CONNECT_REQUEST, before the CM accepts it;
     * {@code releaseId} runs once its verbs are released. It counts as announced (see the class comment)
     * until its HELLO is decided or it is released.
     */
    RdmaLink accepted(long conn, RdmaMedium medium, RdmaCmId id, Runnable releaseId) {
        return accepted(conn, medium, id, releaseId, true);
    }

    /**
     * As {@link #accepted(long, RdmaMedium, RdmaCmId, Runnable)}; {@code announce} false (tests): a
     * connection made after its TCP connect, as sora's clients do not (its request is decided as an
     * unannounced one).
     */
    RdmaLink accepted(long conn, RdmaMedium medium, RdmaCmId id, Runnable releaseId, boolean announce) {
        RdmaLink link = new RdmaLink(conn, id, medium, this);
        medium.setOnRelease(() -> {
            unclaimed.remove(link);
            table.withdrawn(link); // left without a request: accepts stop waiting for it
            releaseId.run();
        });
        unclaimed.add(link);
        if (announce) table.announced(link);
        medium.setPairingListener(link);
        // a connection whose HELLO never comes (a client that died, or any RDMA CM client on this port that is
        // not sora) is dropped: it held a thread, a queue pair and its buffers until the listener closed
        // (found in review, 2026-11-28)
        medium.expirePairingAt(System.nanoTime() + helloWaitNanos, () -> {
            if (link.hello() == null) {
                if (tracer.isOn(Category.JSOR)) {
                    tracer.event(Hook.CM_EVENT, conn, "rdma", "no HELLO within " + helloWaitNanos / 1_000_000 + " ms: dropped", null);
                }
                medium.abort();
            }
        });
        return link;
    }

    /**
     * How long an accepted RDMA connection may take to send its HELLO (a sora client sends it right after
     * its TCP connect, which follows the RDMA connection: milliseconds, or seconds when the connect's SYN is
     * retried; past the announcements' age limit such a client is decided TCP, both ends agreeing).
     */
    static final long HELLO_WAIT_NANOS = 10_000_000_000L;
    private volatile long helloWaitNanos = HELLO_WAIT_NANOS;

    /** Tests: a shorter {@link #HELLO_WAIT_NANOS}. */
    void helloWait(long nanos) {
        helloWaitNanos = nanos;
    }

    // ---- completion thread of the connection ----

    void request(RdmaLink link, RdmaWire.Hello hello) {
        table.request(link, hello.key(), link);
    }

    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public String check(RdmaLink link, ConnectionKey key) throws IOException {
        RdmaWire.Hello hello = link.hello();
        if (key.server().getPort() != bound.getPort()) {
            return "pairing request for port " + key.server().getPort() + " reached the RDMA listener of port " + bound.getPort();
        }
        if (!bound.getAddress().isAnyLocalAddress() && !bound.getAddress().equals(key.server().getAddress())) {
            return "pairing request for " + key.server() + " reached the RDMA listener bound to " + bound;
        }
        if (hello.ringSize() <= 0 || hello.ringSize() > RdmaClient.MAX_RING) {
            return "client receive ring of " + hello.ringSize() + " bytes (1 byte to 256 MiB allowed)";
        }
        InetSocketAddress peer = link.peer();
        if (peer == null || !peer.getAddress().equals(key.client().getAddress())) {
            return "RDMA peer address " + (peer == null ? "unknown" : peer.getAddress().getHostAddress())
                    + " is not the TCP client's address " + key.client().getAddress().getHostAddress();
        }
        // which connection this request names: 0 while it waits to be accepted, else the accepted socket's inode
        // (an accept of a later connection reusing the four-tuple must not look for this pairing's proof)
        long[] inode = {-1};
        String notHere = established(key, inode);
        link.serverInode(inode[0]);
        return notHere;
    }

    /**
     * Null when a TCP connection {@code key} ends at this host (its server end here, its client end the
     * peer's), waiting up to {@link #PROC_CHECK_MILLIS} for it: the client's request can overtake the
     * handshake's last packet. One exact sock_diag lookup each time through libsora, as the shm listener's
     * check (a scan of all of {@code /proc/net/tcp} and {@code tcp6} on every pairing cost milliseconds on a
     * host with many connections: issue 13's "exact lookups"); the scan only where the lookup cannot tell
     * (no libsora, a kernel without TCP sock_diag).
     */
    static String established(ConnectionKey key) throws IOException {
        return established(key, null);
    }

    /** As {@link #established(ConnectionKey)}; {@code inode[0]} (if given) is set as {@link io.sora.transport.NativeSockets#tcpState(InetSocketAddress, InetSocketAddress, long[])} sets it. */
    static String established(ConnectionKey key, long[] inode) throws IOException {
        long deadline = System.nanoTime() + PROC_CHECK_MILLIS * 1_000_000L;
        int state = 0;
        for (int i = 0; ; i++) {
            state = io.sora.transport.NativeSockets.tcpState(key.server(), key.client(), inode);
            if (state <= 0) break; // cannot tell this way (not even the port's listener found): the scan
            // a link-local server address from the wire has no scope: the kernel keys such a connection by its
            // interface too and finds only the listener; the scan, which ignores scopes, tells (found in review)
            if (state == io.sora.transport.NativeSockets.TCP_LISTEN && io.sora.transport.NativeSockets.unscopedLinkLocal(key.server().getAddress())) break;
            if (state == io.sora.transport.NativeSockets.TCP_ESTABLISHED || state == io.sora.transport.NativeSockets.TCP_CLOSE_WAIT
                    || state == TCP_SYN_RECV || state == TCP_NEW_SYN_RECV) {
                return null;
            }
            if (System.nanoTime() - deadline >= 0 || i > 10_000) {
                return "no TCP connection " + key + " ends at this host ("
                        + (state == io.sora.transport.NativeSockets.TCP_LISTEN ? "none" : "state " + state) + " in its kernel)";
            }
            if (i < 16) {
                Thread.yield();
            } else {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "interrupted while looking for the TCP connection " + key;
                }
            }
        }
        if (!ProcNetTcp.awaitConnection(key, PROC_CHECK_MILLIS)) {
            return "no TCP connection " + key + " ends at this host (checked /proc/net/tcp and tcp6)";
        }
        return null;
    }

    /** The kernel's states of a connection whose handshake's last packet is on its way (as the scan accepted 03). */
    private static final int TCP_SYN_RECV = 3;
    private static final int TCP_NEW_SYN_RECV = 12;

    @Override
    public void offer(Pairing<RdmaLink> pairing, PairingOptions options) throws IOException {
        RdmaLink link = pairing.link();
        byte[] secret = new byte[RdmaWire.SECRET_SIZE];
        RANDOM.nextBytes(secret);
        if (!link.offering(pairing, secret)) {
            pairing.abort(link.failure());
            return;
        }
        try {
            RdmaWire.Hello hello = link.hello();
            Verbs.Region ring = link.medium.allocateReceiveRing(options.receiveBufferSize());
            link.medium.allocateSendRing(hello.ringSize(), hello.ringAddress(), hello.rkey());
            // under the pairing's lock, as its abort: an accept that finds this pairing over finds the offer's
            // proof check (a proof may come on the TCP connection from now on)
            synchronized (pairing) {
                if (!pairing.offered()) return;
                link.proof().offerMayBeOut(true);
            }
            try {
                link.medium.qp.postMessage(new RdmaWire.Offer(ring.address(), ring.rkey(), options.receiveBufferSize(), secret, link.id));
            } catch (IOException | RuntimeException e) {
                link.proof().offerMayBeOut(false); // never sent: no proof can come
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not offer a ring: " + e.getMessage(), e);
        }
    }

    /** Sends NO, lets it complete (bounded), then drops the RDMA connection. */
    @Override
    public void refuse(RdmaLink link, String reason) {
        link.medium.qp.sendNo(reason); // the client falls back when the connection drops as well
        link.medium.abort();
    }

    @Override
    public void release(RdmaLink link) {
        link.medium.abort();
    }

    @Override
    public FastConnection connection(Pairing<RdmaLink> pairing, SocketHooks hooks) {
        RdmaLink link = pairing.link();
        unclaimed.remove(link);
        return new RingConnection(link.id, "rdma", link.medium, hooks, spinIterations);
    }

    // ---- accepting thread ----

    @Override
    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
        if (wait.toNanos() < minWaitNanos) wait = Duration.ofNanos(minWaitNanos);
        return table.awaitPairing(key, wait, hooks);
    }

    /** The pairing's proof of the TCP connection, once an offer may have gone out (see {@link ProofCheck}). */
    @Override
    public io.sora.transport.Settlement settlement(RdmaLink link) {
        return link.proof();
    }

    /**
     * Any user of a client host with a TCP connection of its own to this server can commit a pairing for
     * that connection once it was accepted (as a new connection reusing its four-tuple would be paired),
     * which no accept will claim: each held its queue pair and rings (a shadow of up to 256 MiB registered,
     * the peer's choice) until the listener closed. Released after a minute.
     */
    @Override
    public long unclaimedTtlNanos() {
        return PairingTable.TCP_MARK_TTL_NANOS;
    }

    /** Tests: how long an accept waits for a proof (0: the rule's bound). */
    private volatile long proofWaitNanos;

    void proofWait(long nanos) {
        proofWaitNanos = nanos;
    }

    long proofWaitNanos() {
        return proofWaitNanos;
    }

    Tracer tracer() {
        return tracer;
    }

    /**
     * Stops listening and drops connections nobody claimed (their clients see them die, as TCP resets
     * connections still in the accept queue). Claimed connections keep working; the CM thread ends
     * when the last of them is released.
     */
    @Override
    public void close() {
        table.close();
        if (listener != null) listener.stop();
        dropUnclaimed();
        if (listener != null) listener.closeWhenIdle();
    }

    /**
     * The listener's CM event loop failed: no connection request can come any more, so accepts fall back
     * at once with the reason (they waited the whole pairing wait for one), and connections not yet
     * claimed are dropped. Claimed connections keep working.
     */
    void listenerFailed(String reason) {
        if (tracer.isOn(Category.JSOR)) tracer.event(Hook.CM_EVENT, 0, "rdma", "listener for " + bound + " failed: " + reason, null);
        table.close("rdma listener failed: " + reason);
        dropUnclaimed();
    }

    /**
     * Drops the connections no accept claimed (their clients see them die); not one an accept claimed and
     * is about to make its connection of (after the table's close, no pairing can be claimed any more).
     */
    private void dropUnclaimed() {
        for (RdmaLink link : unclaimed) {
            io.sora.transport.Pairing<RdmaLink> p = link.pairing();
            if (p != null && p.isClaimed() && p.state() == io.sora.transport.Pairing.State.COMMITTED) continue;
            link.medium.abort();
        }
    }

    // ---- tests ----

    /** Whether the key's pairing is committed and waits for its accept. */
    boolean committedForTests(ConnectionKey key) {
        return table.entry(key) == PairingTable.Entry.PAIRING && table.stateForTests(key) == io.sora.transport.Pairing.State.COMMITTED;
    }

    /** Whether the key is marked TCP. */
    boolean decidedTcp(ConnectionKey key) {
        return table.entry(key) == PairingTable.Entry.TCP;
    }

    /** Connections neither claimed by an accept nor released. */
    int unclaimedCount() {
        return unclaimed.size();
    }
}
