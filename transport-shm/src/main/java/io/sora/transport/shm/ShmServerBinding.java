package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.LocalAddresses;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shm listener of one bound server socket. Pairing requests (HELLO) arrive on the rendezvous
 * thread and are answered at once; {@link #awaitPairing} then claims the result for the accepted TCP
 * socket. Each key is decided exactly once, one way: the first of "HELLO registered" and "accept
 * decided TCP" wins the entry in a {@link ConcurrentHashMap}, so both ends always agree.
 *
 * <p>Accept never waits for a client that will not pair. A pairing client announces itself (ANNOUNCE,
 * answered NOTED by the rendezvous thread) <em>before</em> its TCP connect, and sends its HELLO after
 * it. So when {@code accept()} returns a connection with no HELLO registered, the only clients that
 * may still send one are those announced at that moment; {@link #awaitPairing} waits until each of
 * them has sent its HELLO or gone (microseconds: they are mid-connect), never for the pairing wait
 * as such. With none announced, a connection is TCP at once: a client without sora pays nothing.
 */
final class ShmServerBinding implements ServerBinding {
    /** How long a "this key is TCP" mark outlives its last use; it only has to outlast late requests. */
    static final long TCP_MARK_TTL_NANOS = 60_000_000_000L;

    /** What the map holds per key: a pairing under way, or a verdict of TCP. */
    /** The key's connection stays on TCP; {@code reason} says why when a pairing was aborted (else null). */
    private record TcpMark(long markedNanos, long awaitStartNanos, String reason) {}

    private final ShmDirectory dir;
    private final InetSocketAddress bound;
    private final AcceptPolicy policy;
    private final Tracer tracer;
    private final ShmSettings settings;
    private final ConcurrentHashMap<ConnectionKey, Object> entries = new ConcurrentHashMap<>();
    /** Rendezvous channels that announced a pairing and have not sent their HELLO yet, with when. */
    private final ConcurrentHashMap<SocketChannel, Long> announced = new ConcurrentHashMap<>();
    private final Object arrivals = new Object();
    /** Accepting threads in {@code arrivals.wait}; guarded by {@code arrivals}. */
    private int waiting;
    private final RendezvousListener listener;
    private volatile boolean closed;
    private volatile long lastSweepNanos = System.nanoTime();

    ShmServerBinding(ShmDirectory dir, InetSocketAddress bound, AcceptPolicy policy, Tracer tracer,
                     ShmSettings settings) throws IOException {
        this.dir = dir;
        this.bound = bound;
        this.policy = policy;
        this.tracer = tracer;
        this.settings = settings;
        this.listener = new RendezvousListener(dir.socketPath(bound.getPort()), bound.getPort(), handler);
    }

    RendezvousListener listener() {
        return listener;
    }

    // ---- rendezvous thread ----

    private final RendezvousListener.HelloHandler handler = new RendezvousListener.HelloHandler() {
        @Override
        public void onHello(SocketChannel channel, Wire.Hello hello) {
            try {
                ShmServerBinding.this.onHello(channel, hello);
            } finally {
                // after the entry (if any) is in the map: a waiting accept sees one or the other
                withdrawn(channel);
            }
        }

        @Override
        public void onAnnounce(SocketChannel channel) throws IOException {
            announced.put(channel, System.nanoTime());
            writeFully(channel, Wire.encode(new Wire.Noted()));
        }

        @Override
        public void onWithdrawn(SocketChannel channel) {
            withdrawn(channel);
        }
    };

    private void withdrawn(SocketChannel channel) {
        if (announced.remove(channel) != null) {
            synchronized (arrivals) {
                arrivals.notifyAll();
            }
        }
    }

    private void onHello(SocketChannel ch, Wire.Hello hello) {
        sweep(System.nanoTime());
        ConnectionKey key = hello.key();
        String refusal;
        try {
            refusal = check(ch, hello);
        } catch (IOException | RuntimeException e) {
            refusal = "pairing check failed: " + e.getMessage();
        }
        if (refusal != null) {
            refuse(ch, refusal);
            return;
        }
        AcceptPolicy.Decision decision;
        try {
            decision = policy.decide(key);
        } catch (RuntimeException e) {
            refuse(ch, "accept policy failed for " + key + ": " + e);
            return;
        }
        if (decision instanceof AcceptPolicy.Refuse r) {
            // the key is checked: the accept side reports the same reason
            long now = System.nanoTime();
            entries.putIfAbsent(key, new TcpMark(now, now, r.reason()));
            refuse(ch, r.reason());
            return;
        }
        PairingOptions options = ((AcceptPolicy.Allow) decision).options();
        long id = RingConnection.nextId();
        PendingPairing pending = new PendingPairing(id, key, ch, tracer, this::onAborted);
        Object prev = entries.putIfAbsent(key, pending);
        Long announcedAt = announced.get(ch);
        if (prev instanceof TcpMark mark && mark.reason() == null && announcedAt != null
                && mark.awaitStartNanos() - announcedAt < 0 && entries.replace(key, prev, pending)) {
            // The accept that made this mark began before this client announced itself, and the
            // announcement precedes its TCP connect: that accept was an earlier connection's with the
            // same four-tuple (loopback reuses ports in TIME_WAIT at once), not this one's. Its start,
            // not when it marked: it may have marked after waiting for other clients' announcements,
            // by which time this client had announced (seen as 'server already accepted on TCP').
            prev = null;
        }
        if (prev instanceof TcpMark mark) {
            long after = (System.nanoTime() - mark.awaitStartNanos()) / 1_000_000L;
            refuse(ch, "server already accepted on TCP (pairing request arrived after " + after + " ms)");
            return;
        }
        if (prev != null) {
            refuse(ch, "duplicate pairing request for " + key);
            return;
        }
        synchronized (arrivals) {
            arrivals.notifyAll();
        }
        offer(pending, options, hello.receiveRing());
    }

    /** The checks before the policy: null when the request may go on, else the refusal reason. */
    private String check(SocketChannel ch, Wire.Hello hello) throws IOException {
        PeerCredentials.requireSameUser(ch, "pairing client");
        ConnectionKey key = hello.key();
        if (key.server().getPort() != bound.getPort()) {
            return "pairing request for port " + key.server().getPort() + " reached the listener of port " + bound.getPort();
        }
        if (!bound.getAddress().isAnyLocalAddress() && !bound.getAddress().equals(key.server().getAddress())) {
            return "pairing request for " + key.server() + " reached the listener bound to " + bound;
        }
        Segment.checkRing("client receive", hello.receiveRing());
        // The requester is a process of this user on this host (checked above); the connection it
        // names must start at this host too. Only a connection accept() returns with exactly this key
        // ever claims the pairing, so a key naming no connection costs one unclaimed entry until the
        // requester closes its rendezvous. (An exact check, that the requester owns the TCP socket,
        // would need sock_diag and /proc/<pid>/fd: a same-user process can read the server anyway.)
        if (!LocalAddresses.isLocal(key.server().getAddress())) {
            // a client whose rule names another host on this port: its connection never reaches here
            return "server address " + key.server().getAddress().getHostAddress() + " of " + key
                    + " is not an address of this host";
        }
        if (!LocalAddresses.isLocal(key.client().getAddress())) {
            return "client address " + key.client().getAddress().getHostAddress() + " of " + key
                    + " is not an address of this host";
        }
        return null;
    }

    private void offer(PendingPairing pending, PairingOptions options, int clientReceive) {
        try {
            int c2s = Segment.ringSize(options.receiveBufferSize());
            int s2c = Segment.ringSize(clientReceive);
            java.nio.file.Path path = dir.newSegmentPath();
            byte[] secret = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
            Segment seg = Segment.create(path, c2s, s2c, secret);
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_CREATE, pending.id, "shm", null,
                        path + " mode=0600 c2s=" + c2s + " s2c=" + s2c + " key=" + pending.key);
            }
            ShmMedium medium = new ShmMedium(pending.id, seg, true, pending.channel, tracer, pending, settings.futex());
            if (!pending.offered(seg, medium)) {
                java.nio.file.Files.deleteIfExists(path);
                return;
            }
            writeFully(pending.channel, Wire.encode(new Wire.Offer(path.toString(), secret, c2s, s2c, pending.id)));
            DoorbellLoop.get().register(pending.channel, medium);
        } catch (IOException | RuntimeException e) {
            String why = "could not offer a segment: " + e.getMessage();
            if (pending.state() == PendingPairing.State.HELLO) {
                try {
                    writeFully(pending.channel, Wire.encode(new Wire.No(why)));
                } catch (IOException ignored) {
                    // the client falls back on EOF as well
                }
            }
            pending.aborted(why);
        }
    }

    private void refuse(SocketChannel ch, String reason) {
        try {
            writeFully(ch, Wire.encode(new Wire.No(reason)));
        } catch (IOException e) {
            // the client gave up already; it falls back on its own
        }
        try {
            ch.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }

    /** Small frames on a fresh socket fit its buffer; a bounded loop covers a short write. */
    static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        for (int i = 0; b.hasRemaining(); i++) {
            if (ch.write(b) == 0) {
                if (i > 1000) throw new IOException("rendezvous peer does not read");
                Thread.onSpinWait();
            }
        }
    }

    private void onAborted(PendingPairing p) {
        entries.replace(p.key, p, new TcpMark(System.nanoTime(), System.nanoTime(), p.reason()));
    }

    // ---- accepting thread ----

    @Override
    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
        long start = System.nanoTime();
        sweep(start);
        try {
            Object e = awaitEntry(key, start, wait);
            if (e instanceof TcpMark m) {
                return new PairingResult.Fallback(closed ? "shm listener closed"
                        : m.reason() != null ? m.reason() : noRequest(start, wait));
            }
            return claim(key, (PendingPairing) e, wait, hooks);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            entries.compute(key, (k, v) -> v instanceof PendingPairing ? v : new TcpMark(System.nanoTime(), start, null));
            Object now = entries.get(key);
            if (now instanceof PendingPairing p) p.aborted("accepting thread interrupted");
            return new PairingResult.Fallback("interrupted while waiting for pairing");
        }
    }

    /**
     * Waits for the key's entry while a client announced before this call may still send it (each of
     * them sends its HELLO or goes within its TCP connect), at most {@code wait}; then atomically marks
     * the key TCP if no entry came.
     */
    private Object awaitEntry(ConnectionKey key, long start, Duration wait) throws InterruptedException {
        long deadline = start + wait.toNanos();
        java.util.Set<SocketChannel> pending = null;
        synchronized (arrivals) {
            for (;;) {
                Object e = entries.get(key);
                if (e != null || closed) break;
                if (pending == null) {
                    if (announced.isEmpty()) break;
                    pending = new java.util.HashSet<>(announced.keySet());
                } else {
                    pending.retainAll(announced.keySet());
                    if (pending.isEmpty()) break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) break;
                waiting++;
                try {
                    arrivals.wait(Math.max(1, left / 1_000_000L));
                } finally {
                    waiting--;
                }
            }
        }
        return entries.compute(key, (k, v) -> {
            if (v instanceof PendingPairing) return v;
            // A pairing the client gave up on (after the OFFER) keeps its reason for the accept side.
            if (v instanceof TcpMark m && m.reason() != null) return v;
            // Absent: too late for a request. A previous mark (tuple reuse) is refreshed, still TCP.
            return new TcpMark(System.nanoTime(), start, null);
        });
    }

    private static String noRequest(long start, Duration wait) {
        long waited = System.nanoTime() - start;
        return waited >= wait.toNanos() ? "no pairing request within " + wait.toMillis() + " ms"
                : "client announced no pairing (no sora, or no shm rule for this server)";
    }

    private PairingResult claim(ConnectionKey key, PendingPairing p, Duration wait, SocketHooks hooks)
            throws InterruptedException {
        long bound = Math.max(2_000_000_000L, 10 * wait.toNanos());
        PendingPairing.State s = p.await(bound);
        if (s != PendingPairing.State.COMMITTED) {
            // Close the rendezvous so the client's fast connection, if it thinks it has one, fails loudly.
            p.aborted("no COMMIT within " + bound / 1_000_000L + " ms");
            if (p.state() != PendingPairing.State.COMMITTED) {
                return new PairingResult.Fallback(p.reason());
            }
        }
        entries.remove(key, p);
        RingConnection conn = new RingConnection(p.id, "shm", p.medium(), hooks, settings.spinIterations());
        return new PairingResult.Paired(conn);
    }

    /** Drops expired TCP marks; at most about once a second, from the accepting path. */
    private void sweep(long now) {
        if (now - lastSweepNanos < 1_000_000_000L) return;
        lastSweepNanos = now;
        entries.entrySet().removeIf(e -> e.getValue() instanceof TcpMark m && now - m.markedNanos() > TCP_MARK_TTL_NANOS);
    }

    /**
     * Stops the rendezvous (its socket file is gone on return), and releases pairings nobody claimed.
     * Connections already handed out by {@link #awaitPairing} are not affected.
     */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        listener.close();
        synchronized (arrivals) {
            arrivals.notifyAll();
        }
        // As TCP resets connections still in the accept queue, clients of unclaimed pairings see the
        // control channel drop without a close: reads drain then EOF, writes fail with a reset.
        for (Object e : entries.values()) {
            if (e instanceof PendingPairing p) {
                p.aborted("shm listener closed");
                if (p.state() == PendingPairing.State.COMMITTED) p.medium().closeChannel();
            }
        }
        entries.clear();
        try {
            listener.join(2000);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    /** Accepting threads waiting for an announced client right now (tests). */
    int waitingAccepts() {
        synchronized (arrivals) {
            return waiting;
        }
    }

    /** Whether the key is marked TCP (tests). */
    boolean decidedTcp(ConnectionKey key) {
        return entries.get(key) instanceof TcpMark;
    }

    int entryCount() {
        return entries.size();
    }
}
