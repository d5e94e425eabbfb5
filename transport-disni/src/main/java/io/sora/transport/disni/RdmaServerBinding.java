package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ProcNetTcp;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The RDMA listener of one bound server socket: an RDMA CM listen on the same port (a wildcard bound
 * address listens on the RDMA device's address), its event thread {@code sora-rdma-listen-<port>}
 * accepting every CONNECT_REQUEST with a fresh queue pair, and the HELLO checks on each connection's
 * completion thread. {@link #awaitPairing} claims the result for the accepted TCP socket. As in the
 * shm listener, each key is decided exactly once, one way: the first of "HELLO registered" and
 * "accept gave up waiting" wins the key's entry in a {@link ConcurrentHashMap}, so both ends agree.
 */
final class RdmaServerBinding implements ServerBinding {
    static final long TCP_MARK_TTL_NANOS = 60_000_000_000L;
    static final long PROC_CHECK_MILLIS = 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private record TcpMark(long markedNanos, long awaitStartNanos) {}

    private final InetSocketAddress bound;
    private final InetSocketAddress listenAddress;
    private final AcceptPolicy policy;
    private final Tracer tracer;
    private final int spinIterations;
    private final ConcurrentHashMap<ConnectionKey, Object> entries = new ConcurrentHashMap<>();
    private final java.util.Set<RdmaPending> unclaimed = ConcurrentHashMap.newKeySet();
    private final Object arrivals = new Object();
    private final CmLoop loop;
    private final RdmaCmId listenId;
    private volatile boolean closed;
    private volatile long lastSweepNanos = System.nanoTime();
    private final long minWaitNanos;

    /** Without an RDMA CM listen: connections are handed in by {@link #accepted} (tests, over fake verbs). */
    RdmaServerBinding(InetSocketAddress bound, AcceptPolicy policy, Tracer tracer, int spinIterations, long minWaitNanos) {
        this.minWaitNanos = minWaitNanos;
        this.bound = bound;
        this.listenAddress = bound;
        this.policy = policy;
        this.tracer = tracer;
        this.spinIterations = spinIterations;
        this.loop = null;
        this.listenId = null;
    }

    RdmaServerBinding(InetSocketAddress bound, InetSocketAddress listenAddress, AcceptPolicy policy, Tracer tracer,
                      int spinIterations, long minWaitNanos) throws IOException {
        this.minWaitNanos = minWaitNanos;
        this.bound = bound;
        this.listenAddress = listenAddress;
        this.policy = policy;
        this.tracer = tracer;
        this.spinIterations = spinIterations;
        this.loop = new CmLoop("sora-rdma-listen-" + bound.getPort(), tracer, this::onRequest, 500);
        try {
            listenId = loop.createId();
            listenId.bindAddr(listenAddress);
            listenId.listen(128);
        } catch (IOException | RuntimeException e) {
            loop.closeWhenIdle();
            throw new IOException("cannot listen for RDMA connections on " + listenAddress + ": " + e.getMessage(), e);
        }
    }

    InetSocketAddress listenAddress() {
        return listenAddress;
    }

    // ---- CM thread ----

    private void onRequest(EventType type, RdmaCmEvent event) {
        RdmaCmId id = event.getConnIdPriv();
        if (closed || id == null) {
            if (id != null) loop.release(id); // destroying a requested id rejects it
            return;
        }
        long conn = RingConnection.nextId();
        RdmaMedium medium = null;
        try {
            QueuePair qp = QueuePair.open(id, conn, tracer);
            medium = new RdmaMedium(conn, qp, tracer);
            RdmaPending p = accepted(conn, medium, id, () -> loop.execute(() -> loop.release(id)));
            loop.register(id, p);
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

    /** A new connection's pairing state, on {@code medium}; {@code releaseId} runs once its verbs are released. */
    RdmaPending accepted(long conn, RdmaMedium medium, RdmaCmId id, Runnable releaseId) {
        RdmaPending p = new RdmaPending(conn, id, medium, this::onHello, this::onAborted);
        medium.setOnRelease(() -> {
            unclaimed.remove(p);
            releaseId.run();
        });
        unclaimed.add(p);
        medium.setPairingListener(p);
        return p;
    }

    /** Whether the key is marked TCP (tests). */
    boolean decidedTcp(ConnectionKey key) {
        return entries.get(key) instanceof TcpMark;
    }

    /** Connections neither claimed by an accept nor released (tests). */
    int unclaimedCount() {
        return unclaimed.size();
    }

    // ---- completion thread of the connection ----

    private void onHello(RdmaPending p, RdmaWire.Hello hello) {
        sweep(System.nanoTime());
        ConnectionKey key = hello.key();
        p.helloFor(key);
        String refusal;
        try {
            refusal = check(p, hello);
        } catch (IOException | RuntimeException e) {
            refusal = "pairing check failed: " + e.getMessage();
        }
        AcceptPolicy.Decision decision = null;
        if (refusal == null) {
            try {
                decision = policy.decide(key);
                if (decision instanceof AcceptPolicy.Refuse r) refusal = r.reason();
            } catch (RuntimeException e) {
                refusal = "accept policy failed for " + key + ": " + e;
            }
        }
        if (refusal == null) {
            Object prev = entries.putIfAbsent(key, p);
            if (prev instanceof TcpMark mark) {
                refusal = "server already accepted on TCP (pairing request arrived after "
                        + (System.nanoTime() - mark.awaitStartNanos()) / 1_000_000L + " ms)";
            } else if (prev != null) {
                refusal = "duplicate pairing request for " + key;
            }
        }
        if (refusal != null) {
            refuse(p, refusal);
            return;
        }
        synchronized (arrivals) {
            arrivals.notifyAll();
        }
        offer(p, ((AcceptPolicy.Allow) decision).options(), hello);
    }

    /** The checks before the policy: null when the request may go on, else the refusal reason. */
    private String check(RdmaPending p, RdmaWire.Hello hello) throws IOException {
        ConnectionKey key = hello.key();
        if (key.server().getPort() != bound.getPort()) {
            return "pairing request for port " + key.server().getPort() + " reached the RDMA listener of port " + bound.getPort();
        }
        if (!bound.getAddress().isAnyLocalAddress() && !bound.getAddress().equals(key.server().getAddress())) {
            return "pairing request for " + key.server() + " reached the RDMA listener bound to " + bound;
        }
        if (hello.ringSize() <= 0 || hello.ringSize() > RdmaClient.MAX_RING) {
            return "client receive ring of " + hello.ringSize() + " bytes (1 byte to 256 MiB allowed)";
        }
        InetSocketAddress peer = p.peer();
        if (peer == null && p.cmId != null) peer = (InetSocketAddress) p.cmId.getDestination();
        if (peer == null || !peer.getAddress().equals(key.client().getAddress())) {
            return "RDMA peer address " + (peer == null ? "unknown" : peer.getAddress().getHostAddress())
                    + " is not the TCP client's address " + key.client().getAddress().getHostAddress();
        }
        if (!ProcNetTcp.awaitConnection(key, PROC_CHECK_MILLIS)) {
            return "no TCP connection " + key + " ends at this host (checked /proc/net/tcp and tcp6)";
        }
        return null;
    }

    private void offer(RdmaPending p, PairingOptions options, RdmaWire.Hello hello) {
        try {
            Verbs.Region ring = p.medium.allocateReceiveRing(options.receiveBufferSize());
            p.medium.allocateSendRing(hello.ringSize(), hello.ringAddress(), hello.rkey());
            byte[] secret = new byte[RdmaWire.SECRET_SIZE];
            RANDOM.nextBytes(secret);
            if (!p.offered(secret)) return;
            p.medium.qp.postMessage(new RdmaWire.Offer(ring.address(), ring.rkey(), options.receiveBufferSize(), secret, p.id));
        } catch (IOException | RuntimeException e) {
            refuse(p, "could not offer a ring: " + e.getMessage());
        }
    }

    /** Sends NO, lets it complete (bounded), then drops the RDMA connection. */
    private void refuse(RdmaPending p, String reason) {
        p.aborted(reason);
        try {
            long seq = p.medium.qp.postMessage(new RdmaWire.No(reason));
            long deadline = System.nanoTime() + 200_000_000L;
            while (p.medium.qp.completedUpTo() < seq && System.nanoTime() - deadline < 0) {
                if (p.medium.qp.poll(true) <= 0) Thread.onSpinWait();
            }
        } catch (IOException | RuntimeException e) {
            // the client falls back when the connection drops as well
        }
        p.medium.abort();
    }

    private void onAborted(RdmaPending p) {
        ConnectionKey key = p.key();
        if (key != null) entries.replace(key, p, new TcpMark(System.nanoTime(), System.nanoTime()));
    }

    // ---- accepting thread ----

    @Override
    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
        if (wait.toNanos() < minWaitNanos) wait = Duration.ofNanos(minWaitNanos);
        long start = System.nanoTime();
        sweep(start);
        try {
            Object e = awaitEntry(key, start, wait);
            if (e instanceof TcpMark) {
                return new PairingResult.Fallback(closed ? "rdma listener closed" : "no pairing request within " + wait.toMillis() + " ms");
            }
            return claim(key, (RdmaPending) e, wait, hooks);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            entries.compute(key, (k, v) -> v instanceof RdmaPending ? v : new TcpMark(System.nanoTime(), start));
            if (entries.get(key) instanceof RdmaPending p) {
                p.aborted("accepting thread interrupted");
                if (p.state() != RdmaPending.State.COMMITTED) p.medium.abort();
            }
            return new PairingResult.Fallback("interrupted while waiting for pairing");
        }
    }

    private Object awaitEntry(ConnectionKey key, long start, Duration wait) throws InterruptedException {
        long deadline = start + wait.toNanos();
        synchronized (arrivals) {
            for (;;) {
                if (entries.get(key) != null || closed) break;
                long left = deadline - System.nanoTime();
                if (left <= 0) break;
                arrivals.wait(Math.max(1, left / 1_000_000L));
            }
        }
        return entries.compute(key, (k, v) -> v instanceof RdmaPending ? v : new TcpMark(System.nanoTime(), start));
    }

    private PairingResult claim(ConnectionKey key, RdmaPending p, Duration wait, SocketHooks hooks) throws InterruptedException {
        long limit = Math.max(2_000_000_000L, 10 * wait.toNanos());
        if (p.await(limit) != RdmaPending.State.COMMITTED) {
            p.aborted("no COMMIT within " + limit / 1_000_000L + " ms");
            if (p.state() != RdmaPending.State.COMMITTED) {
                p.medium.abort(); // a client that believes it is paired sees the connection die
                return new PairingResult.Fallback(p.reason());
            }
        }
        entries.remove(key, p);
        unclaimed.remove(p);
        return new PairingResult.Paired(new RingConnection(p.id, "rdma", p.medium, hooks, spinIterations));
    }

    private void sweep(long now) {
        if (now - lastSweepNanos < 1_000_000_000L) return;
        lastSweepNanos = now;
        entries.entrySet().removeIf(e -> e.getValue() instanceof TcpMark m && now - m.markedNanos() > TCP_MARK_TTL_NANOS);
    }

    /**
     * Stops listening and drops connections nobody claimed (their clients see them die, as TCP resets
     * connections still in the accept queue). Claimed connections keep working; the CM thread ends
     * when the last of them is released.
     */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        synchronized (arrivals) {
            arrivals.notifyAll();
        }
        if (loop != null) loop.execute(() -> loop.release(listenId));
        for (RdmaPending p : unclaimed) {
            p.aborted("rdma listener closed");
            p.medium.abort();
        }
        entries.clear();
        if (loop != null) loop.closeWhenIdle();
    }
}
