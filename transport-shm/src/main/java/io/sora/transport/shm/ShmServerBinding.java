package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.LocalAddresses;
import io.sora.transport.NativeSockets;
import io.sora.transport.Pairing;
import io.sora.transport.PairingMedium;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.PairingTable;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.VirtualThreads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The shm listener of one bound server socket: its rendezvous ({@link RendezvousListener}) hands each
 * ANNOUNCE and HELLO to the medium-neutral {@link PairingTable}, which decides, and calls back here for
 * what is shm's own: the checks of a request (same user, the key's server, sizes, both ends on this
 * host), the offer (a segment, created, mapped and named in the OFFER), the refusal (NO), the release
 * (unlink the segment, drop the rendezvous channel) and the connection. {@link #awaitPairing} claims
 * the result for the accepted TCP socket.
 *
 * <p>Accept never waits for a client that will not pair: a pairing client announces itself (ANNOUNCE,
 * answered NOTED by the rendezvous thread) before its TCP connect and sends its HELLO after it, so
 * the table waits only for clients announced when {@code accept()} returned (docs/shm.md, "Why
 * ANNOUNCE").
 */
final class ShmServerBinding implements ServerBinding, PairingMedium<ShmLink> {
    private final ShmDirectory dir;
    private final InetSocketAddress bound;
    private final Tracer tracer;
    private final ShmSettings settings;
    private final PairingTable<ShmLink> table;
    private final RendezvousListener listener;
    /** How often the listener reads the channels of direct pairings nobody claims ({@link #sweepOffered}). */
    static final long SWEEP_EVERY_MILLIS = 1000;
    /** The longest a claiming thread waits on the channel before it looks at its interrupt status again. */
    static final int CLAIM_SLICE_MILLIS = 10;
    /** Direct pairings offered and not yet committed or aborted (see {@link #awaitCommit}). */
    private final java.util.Set<ShmLink> offeredDirect = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Guards {@link #spare} and the sizes wanted for it. */
    private final Object spareLock = new Object();
    /** A segment created ahead for the next offer, or null. */
    private Spare spare;
    private int spareC2S;
    private int spareS2C;
    private boolean spareClosed;

    /**
     * Channels of closed connections kept with their segments for the clients' next connections (see
     * {@link ShmMedium}, "Kept for the next connection"), from the server end's close until a HELLO on
     * the channel takes the segment or the channel ends. Null when nothing is kept.
     */
    private final java.util.concurrent.ConcurrentHashMap<SocketChannel, KeptEnd> kept;
    private volatile boolean closing;
    /** Connections paired on a kept segment (tests, diagnostics). */
    private final java.util.concurrent.atomic.AtomicLong keptPairings = new java.util.concurrent.atomic.AtomicLong();

    /**
     * A kept channel's segment. {@code announced}: the client's next connection was seen and counted in
     * the table; {@code gone}: the channel ended ({@link #forget}). Both guarded by this object's monitor,
     * since the catch-up (under the listener's lock) and the doorbell thread's {@link #forget} (without
     * it) race: a catch-up that counted the announcement after {@code forget} had looked left a closed
     * channel counted as announced for good, and every accept with no request then waited out the
     * pairing wait (found in review, 2026-11-28).
     */
    private static final class KeptEnd {
        final Segment segment;
        boolean announced;
        boolean gone;

        KeptEnd(Segment segment) {
            this.segment = segment;
        }

        synchronized boolean counted() {
            return announced;
        }
    }

    private final ShmMedium.Keeper keeper = new ShmMedium.Keeper() {
        @Override
        public boolean keep(SocketChannel channel, Segment segment) {
            if (closing) return false;
            kept.put(channel, new KeptEnd(segment));
            if (!closing) return true;
            kept.remove(channel); // close() may have closed the kept channels before this one went in
            return false;
        }

        @Override
        public void dropped(SocketChannel channel) {
            forget(channel);
        }

        @Override
        public void kicked(SocketChannel channel) {
            kicks.incrementAndGet();
            listener.catchUpKept();
        }
    };

    /** A kept channel ended: its segment goes, and an announcement made on it is withdrawn. */
    private void forget(SocketChannel channel) {
        KeptEnd e = kept == null ? null : kept.remove(channel);
        if (e == null) return;
        boolean counted;
        synchronized (e) {
            e.gone = true;
            counted = e.announced; // counted in the table already (inside the monitor): withdrawn below
        }
        if (counted) table.withdrawn(channel);
    }

    /**
     * Under the listener's lock, when an accept catches up or a client kicks the listener (on the doorbell
     * thread, which reads kept channels between connections): a client that announced its next connection
     * in a kept segment (before its TCP connect) is counted as announced, as an ANNOUNCE frame would be;
     * one that wrote its key has its request decided here, on this thread ({@link NextPairing}), by
     * whichever thread takes the channel out of the kept ones first.
     */
    private void catchUpKept(boolean accepting) {
        if (kept == null || kept.isEmpty()) return;
        for (java.util.Map.Entry<SocketChannel, KeptEnd> en : kept.entrySet()) {
            SocketChannel ch = en.getKey();
            KeptEnd e = en.getValue();
            int st = NextPairing.state(e.segment);
            if (st == 0) continue;
            if (st == NextPairing.ANNOUNCED || st == NextPairing.KEYED) {
                synchronized (e) {
                    if (!e.announced && !e.gone) {
                        e.announced = true;
                        table.announced(ch); // inside: a forget that sees the flag finds the entry
                    }
                }
            }
            if ((st == NextPairing.KEYED || st == NextPairing.KEYED_LATE) && kept.remove(ch, e)) {
                requestKept(ch, e, accepting);
            } else if (st == NextPairing.WITHDRAWN && e.counted()) {
                table.withdrawn(ch); // its connect failed, or its wait ran out
            }
        }
    }

    /** A kept segment's key, taken off the listener: decided as a HELLO would be. */
    private void requestKept(SocketChannel ch, KeptEnd e, boolean accepting) {
        Wire.Hello hello;
        try {
            hello = NextPairing.hello(e.segment);
        } catch (java.net.ProtocolException bad) {
            refuse(new ShmLink(ch, null, tracer, e.segment), "bad key in the kept segment: " + bad.getMessage());
            return;
        }
        ShmLink link = new ShmLink(ch, hello, tracer, e.segment);
        link.byAccept = accepting;
        table.request(link, hello.key(), ch);
    }

    /** Accepting threads sleeping on a kept segment for its client's key (tests). */
    private final java.util.concurrent.atomic.AtomicInteger keyWaits = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * An accept waits for announced clients: where every one announced in a kept segment, it sleeps on
     * one of those segments for the client's key (the client wakes it), not for the table's slice.
     */
    @Override
    public boolean awaitAnnounced(java.util.Set<Object> pending, long nanos) {
        if (kept == null || VirtualThreads.isVirtual(Thread.currentThread())) return false;
        KeptEnd first = null;
        for (Object ch : pending) {
            KeptEnd e = kept.get(ch);
            if (e == null) return false; // a fresh channel's (its HELLO comes through the listener), or taken
            int st = NextPairing.state(e.segment);
            if (st == NextPairing.KEYED || st == NextPairing.KEYED_LATE) {
                Thread.yield(); // keyed: the catch-up that follows takes it (if the doorbell thread's does not first)
                return true;
            }
            if (st != NextPairing.ANNOUNCED) return false; // withdrawn: the catch-up that follows sees it
            if (first == null) first = e;
        }
        if (first == null) return false;
        keyWaits.incrementAndGet();
        try {
            NextPairing.awaitKeyed(first.segment, nanos);
        } finally {
            keyWaits.decrementAndGet();
        }
        return true;
    }

    /**
     * A segment made before its offer, on the listener's thread when it has nothing else to do: creating
     * one (a file, its size, a mapping, a secret) is the largest single step of a pairing, and the client
     * waits for it. Sized as the previous offer: a listener's clients usually ask for the same rings.
     * Named {@code spare-<pid>-<random>} until an offer renames it {@code seg-<pid>-<random>}: a
     * {@code seg-} file is always one offered and not yet committed. Deleted when the listener closes.
     */
    private static final class Spare {
        final Path path;
        final byte[] secret;
        final Segment segment;

        Spare(Path path, byte[] secret, Segment segment) {
            this.path = path;
            this.secret = secret;
            this.segment = segment;
        }
    }

    ShmServerBinding(ShmDirectory dir, InetSocketAddress bound, AcceptPolicy policy, Tracer tracer,
                     ShmSettings settings) throws IOException {
        this(dir, bound, policy, tracer, settings, true);
    }

    /** @param listenerThread false (tests): the rendezvous is read only when an accept catches up */
    ShmServerBinding(ShmDirectory dir, InetSocketAddress bound, AcceptPolicy policy, Tracer tracer,
                     ShmSettings settings, boolean listenerThread) throws IOException {
        this.dir = dir;
        this.bound = bound;
        this.tracer = tracer;
        this.settings = settings;
        this.table = new PairingTable<>(this, policy, true);
        this.kept = settings.keep() && DoorbellLoop.NATIVE && io.sora.transport.Futex.isAvailable()
                ? new java.util.concurrent.ConcurrentHashMap<>() : null;
        this.listener = new RendezvousListener(dir.socketPath(bound.getPort()), bound.getPort(), handler, listenerThread);
        IN_PROCESS.add(listener.path());
    }

    /** Rendezvous sockets of this process's open listeners: their clients here kick at once ({@link #inProcess}). */
    private static final java.util.Set<Path> IN_PROCESS = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Whether the listener at {@code socket} is this process's: a client of it may be the very thread that
     * accepts next (a program that connects and accepts on one thread), so it kicks the doorbell thread at
     * once instead of giving an accept time ({@link KickDelay}).
     */
    static boolean inProcess(Path socket) {
        return IN_PROCESS.contains(socket);
    }

    /** Tests: this listener's clients here behave as another process's would ({@link #inProcess} false). */
    void asIfInAnotherProcess() {
        IN_PROCESS.remove(listener.path());
    }

    /** Kicks read from clients' kept channels so far (tests, diagnostics). */
    private final java.util.concurrent.atomic.AtomicLong kicks = new java.util.concurrent.atomic.AtomicLong();

    long kicks() {
        return kicks.get();
    }

    RendezvousListener listener() {
        return listener;
    }

    // ---- rendezvous thread ----

    private final RendezvousListener.HelloHandler handler = new RendezvousListener.HelloHandler() {
        @Override
        public void listenerFailed(String why) {
            ShmServerBinding.this.listenerFailed(why);
        }

        @Override
        public void onHello(SocketChannel channel, Wire.Hello hello) {
            table.request(new ShmLink(channel, hello, tracer), hello.key(), channel);
        }

        @Override
        public void onAnnounce(SocketChannel channel) throws IOException {
            table.announced(channel);
            writeFully(channel, Wire.encode(new Wire.Noted()));
        }

        @Override
        public void onWithdrawn(SocketChannel channel) {
            table.withdrawn(channel);
        }

        @Override
        public void idle() {
            sweepOffered();
            prepareSpare();
        }

        @Override
        public long sweepMillis() {
            return offeredDirect.isEmpty() ? 0 : SWEEP_EVERY_MILLIS;
        }

        @Override
        public void catchUpKept(boolean accepting) {
            ShmServerBinding.this.catchUpKept(accepting);
        }
    };

    /**
     * On the accepting thread that claims the pairing: where the pairing is direct ({@link ShmLink#direct}),
     * reads the client's COMMIT off the rendezvous channel itself, waiting on it with {@code poll}, instead
     * of waiting for the doorbell thread to read it and wake this thread: one thread wake-up less on
     * every connection's set-up (the doorbell loop takes the channel after the COMMIT). Interrupts are
     * seen within {@link #CLAIM_SLICE_MILLIS}. A virtual thread, which must not hold its carrier in a
     * native wait, hands the channel to the doorbell loop and waits as before.
     */
    @Override
    public Pairing.State awaitCommit(Pairing<ShmLink> pairing, long nanos) throws InterruptedException {
        ShmLink link = pairing.link();
        // a kept segment's pairing is committed by the thread that decides it (offerKept): no COMMIT comes
        // on the channel, so a poll of it would only sleep its slice (10 ms) when another thread claims
        // the pairing before that one is done; the commit wakes this wait (found in review, 2026-11-28)
        if (!link.direct() || link.kept != null) return pairing.await(nanos);
        if (VirtualThreads.isVirtual(Thread.currentThread())) {
            link.watchByDoorbell();
            return pairing.await(nanos);
        }
        long deadline = System.nanoTime() + nanos;
        link.claiming(1);
        try {
            for (;;) {
                Pairing.State s = pairing.state();
                if (s.over()) return s;
                if (link.readCommit(false)) continue;
                if (Thread.interrupted()) throw new InterruptedException();
                long left = deadline - System.nanoTime();
                if (left <= 0) return pairing.state();
                int slice = (int) Math.max(1, Math.min(CLAIM_SLICE_MILLIS, left / 1_000_000L));
                int fd = NativeSockets.fd(link.channel);
                boolean waited = false;
                if (fd >= 0) {
                    try {
                        NativeSockets.awaitReadable(fd, slice);
                        waited = true;
                    } catch (java.io.IOException e) {
                        // the descriptor went with an abort: the state says so at the next turn
                    }
                }
                if (!waited) pairing.await(slice * 1_000_000L); // closed: the abort is under way
            }
        } finally {
            link.claiming(-1);
            if (pairing.state().over()) offeredDirect.remove(link);
        }
    }

    /**
     * On the listener's thread: the direct pairings offered more than {@link #SWEEP_EVERY_MILLIS} ago that no
     * accepting thread claims have their channel read for the COMMIT or the client's leaving, so a client
     * that left before its COMMIT is released (its segment and channel) even if no {@code accept()} ever
     * returns its connection; and a COMMIT sent long before the application accepts is taken in.
     */
    private void sweepOffered() {
        long now = System.nanoTime();
        for (ShmLink link : offeredDirect) {
            if (link.pairing().state().over()) {
                offeredDirect.remove(link);
            } else if (now - link.offeredNanos() >= SWEEP_EVERY_MILLIS * 1_000_000L) {
                link.readCommit(true);
            }
        }
    }

    @Override
    public String name() {
        return "shm";
    }

    @Override
    public String check(ShmLink link, ConnectionKey key) throws IOException {
        // a kept channel's peer passed this at its first pairing, and a Unix socket's peer credentials are
        // fixed at its connect: checked again, per connection, it cost a descriptor lookup and a getsockopt
        if (link.kept == null) PeerCredentials.requireSameUser(link.channel, "pairing client");
        if (key.server().getPort() != bound.getPort()) {
            return "pairing request for port " + key.server().getPort() + " reached the listener of port " + bound.getPort();
        }
        if (!bound.getAddress().isAnyLocalAddress() && !bound.getAddress().equals(key.server().getAddress())) {
            return "pairing request for " + key.server() + " reached the listener bound to " + bound;
        }
        Segment.checkRing("client receive", link.hello.receiveRing());
        // The requester is a process of this user on this host (checked above); the connection it
        // names must start at this host too, and be established in this host's kernel (below). (An exact
        // check that the requester owns the TCP socket would need /proc/<pid>/fd as well: a same-user
        // process can read the server anyway.)
        if (!LocalAddresses.isLocal(key.server().getAddress())) {
            // a client whose rule names another host on this port: its connection never reaches here
            return "server address " + key.server().getAddress().getHostAddress() + " of " + key
                    + " is not an address of this host";
        }
        if (!LocalAddresses.isLocal(key.client().getAddress())) {
            return "client address " + key.client().getAddress().getHostAddress() + " of " + key
                    + " is not an address of this host";
        }
        // the connection this thread's accept returned is established (or was, and is closing: CLOSE_WAIT,
        // which the lookup lets through too): the kernel lookup, four system calls, is for the others. A
        // request decided on another thread (the doorbell's, a kicked client's) is looked up as before.
        if (key.equals(ACCEPTED.get())) return null;
        return established(key);
    }

    /**
     * How long a request waits for its connection to be established in this host's kernel (normally it is
     * at once): short, as it runs on threads other connections share (the listener's, an accept's
     * catch-up, the doorbell's) during the very bursts that leave connections unestablished.
     */
    static final long ESTABLISHED_WAIT_NANOS = 500_000L;

    /**
     * Null when the kernel of this network namespace has the connection {@code key} established (or cannot
     * tell: no native library); else why not. A client's connect can return while the server's kernel has
     * no connection: a full backlog drops the handshake's last ACK, or answers with a SYN cookie and keeps
     * nothing, and TCP completes the connection with the client's first data segment. Paired, that client
     * wrote into a ring no accept ever claimed and waited for an answer that never came (found in review,
     * 2026-11-29: backlog overflow, a SOCKS proxy's connection, whose key is not its TCP connection's).
     * On TCP the connection completes as it would without sora.
     */
    static String established(ConnectionKey key) {
        long deadline = System.nanoTime() + ESTABLISHED_WAIT_NANOS;
        for (int i = 0; ; i++) {
            int state = io.sora.transport.NativeSockets.tcpState(key.server(), key.client());
            // 0: not even the port's listener (which the lookup falls back to): a kernel without TCP sock_diag
            // (it says ENOENT for that too), so it cannot be told
            if (state <= 0 || state == io.sora.transport.NativeSockets.TCP_ESTABLISHED
                    || state == io.sora.transport.NativeSockets.TCP_CLOSE_WAIT) {
                return null;
            }
            // a link-local server address with no scope (a key from the wire): the kernel keys such a connection
            // by its interface too and finds only the listener, so it cannot tell (found in review, 2026-11-29)
            if (state == io.sora.transport.NativeSockets.TCP_LISTEN && io.sora.transport.NativeSockets.unscopedLinkLocal(key.server().getAddress())) {
                return null;
            }
            if (System.nanoTime() - deadline >= 0 || i > 10_000) {
                return "no established TCP connection " + key + " in this host's kernel ("
                        + (state == io.sora.transport.NativeSockets.TCP_LISTEN ? "none" : "state " + state)
                        + "; a full backlog, or a proxy between the ends): it stays on TCP";
            }
            Thread.yield();
        }
    }

    @Override
    public void offer(Pairing<ShmLink> pairing, PairingOptions options) throws IOException {
        ShmLink link = pairing.link();
        try {
            long id = RingConnection.nextId();
            int c2s = Segment.ringSize(options.receiveBufferSize());
            int s2c = Segment.ringSize(link.hello.receiveRing());
            if (link.kept != null) {
                offerKept(pairing, link, id, c2s, s2c);
                return;
            }
            Spare ready = takeSpare(c2s, s2c);
            Path path = dir.newSegmentPath();
            byte[] secret = null;
            Segment seg = null;
            if (ready != null) {
                try {
                    seg = ready.segment.renamed(path);
                    secret = ready.secret;
                } catch (IOException gone) {
                    // its file was removed under it (by hand, or a sweep that took it for a dead process's):
                    // this offer makes its own instead of failing the connection
                }
            }
            if (seg == null) {
                secret = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
                seg = Segment.create(path, c2s, s2c, secret);
            }
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_CREATE, id, "shm", null,
                        path + " mode=0600 c2s=" + c2s + " s2c=" + s2c + " key=" + pairing.key());
            }
            ShmMedium medium = new ShmMedium(id, seg, true, link.channel, tracer, link, settings.futex());
            if (kept != null) medium.keepWith(keeper);
            link.offering(pairing, id, seg, medium, false);
            if (!pairing.offered()) {
                Files.deleteIfExists(path);
                return;
            }
            // the accepting thread reads the COMMIT itself where it can wait on the channel (awaitCommit);
            // listed before the OFFER goes, so the list never keeps a pairing already claimed
            if (link.direct()) offeredDirect.add(link);
            try {
                writeFully(link.channel, Wire.encode(new Wire.Offer(path.toString(), secret, c2s, s2c, id)));
            } catch (IOException e) {
                // the client closed its rendezvous: it stopped waiting for an answer (its wait ran out) or left
                throw new ClientLeft(e);
            }
            if (!link.direct()) DoorbellLoop.get().register(link.channel, medium);
            listener.wakeup(); // its idle() makes the next spare
        } catch (ClientLeft e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not offer a segment: " + e.getMessage(), e);
        }
    }

    /**
     * The offer on a kept channel: its segment, mapped at both ends since an earlier connection and
     * reset by the client before it announced this one, serves it. Agreed in the segment's memory
     * ({@link NextPairing}): PAIRED is the commit (the client can no longer withdraw), so the pairing is
     * committed here, on the thread that decided it.
     */
    private void offerKept(Pairing<ShmLink> pairing, ShmLink link, long id, int c2s, int s2c) throws IOException {
        Segment seg = link.kept;
        if (seg.ringC2S != c2s || seg.ringS2C != s2c) {
            throw new IOException("kept segment has " + seg.ringC2S + "/" + seg.ringS2C + "-byte rings, this connection"
                    + " needs " + c2s + "/" + s2c + " (the next connection makes a new one)");
        }
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_SEGMENT_CREATE, id, "shm", null, "kept " + seg.path + " c2s=" + seg.ringC2S
                    + " s2c=" + seg.ringS2C + " key=" + pairing.key());
        }
        ShmMedium medium = new ShmMedium(id, seg, true, link.channel, tracer, null, settings.futex());
        medium.keepWith(keeper);
        // for the client's first waits (see ShmClient.pairKept); only from the accepting thread, whose CPU it is
        if (link.byAccept) medium.publishCpu(io.sora.transport.ThisCpu.current());
        link.offering(pairing, id, seg, medium, true);
        if (!pairing.offered()) return;
        // the channel's handler before the client can ring: a bell of the new connection must reach this medium
        if (!DoorbellLoop.get().rebind(link.channel, medium)) {
            throw new ClientLeft(new IOException("its kept channel ended"));
        }
        // PAIRED and the commit under the pairing's lock, which its abort takes: once the client can no
        // longer withdraw, an abort (the accepting thread interrupted, the listener closing, the claim's
        // bound) must not put this side on TCP (found in review, 2026-11-29: the client on shm, the
        // server's application on TCP, the client's reads then the end, its writes a reset). An abort
        // that came first refused the client in the segment, so the move to PAIRED fails below.
        synchronized (pairing) {
            if (pairing.state() != Pairing.State.OFFERED) return; // aborted meanwhile: TCP at both ends
            if (!NextPairing.pair(seg, id, link.byAccept)) {
                throw new ClientLeft(new IOException("it withdrew from the kept segment"));
            }
            java.util.function.Consumer<Pairing<?>> hook = testAfterKeptPair;
            if (hook != null) hook.accept(pairing);
            keptPairings.incrementAndGet();
            if (link.byAccept) keptPairingsByAccept.incrementAndGet();
            pairing.committed(); // the doorbell loop has the channel already (rebind)
        }
    }

    /** Tests: run between a kept pairing's move to PAIRED and its commit (null in use). */
    static volatile java.util.function.Consumer<Pairing<?>> testAfterKeptPair;

    private final java.util.concurrent.atomic.AtomicLong keptPairingsByAccept = new java.util.concurrent.atomic.AtomicLong();

    /** Of {@link #keptPairings}, those an accepting thread paired (not the doorbell thread after a kick). */
    long keptPairingsByAccept() {
        return keptPairingsByAccept.get();
    }

    /** Connections paired on a kept segment so far (tests, diagnostics). */
    long keptPairings() {
        return keptPairings.get();
    }

    /** Kept channels waiting for their next connection (tests). */
    int keptCount() {
        return kept == null ? 0 : kept.size();
    }

    /** The OFFER could not be written: the client closed its rendezvous first (the pairing's fallback reason). */
    private static final class ClientLeft extends IOException {
        ClientLeft(IOException cause) {
            super("the client left before the offer (its pairing wait ran out, or it closed): " + cause.getMessage(), cause);
        }
    }

    /** The spare if it has these sizes (null if none); a spare of other sizes is deleted. */
    private Spare takeSpare(int c2s, int s2c) throws IOException {
        Spare s;
        synchronized (spareLock) {
            s = spare;
            spare = null;
            spareC2S = c2s;
            spareS2C = s2c;
        }
        if (s == null) return null;
        if (s.segment.ringC2S == c2s && s.segment.ringS2C == s2c) return s;
        Files.deleteIfExists(s.path);
        return null;
    }

    /** On the listener's thread: makes the spare for the next offer if there is none. */
    private void prepareSpare() {
        int c2s;
        int s2c;
        synchronized (spareLock) {
            if (spare != null || spareClosed || spareC2S == 0) return;
            c2s = spareC2S;
            s2c = spareS2C;
        }
        Path path = dir.newSparePath();
        byte[] secret = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
        Segment seg;
        try {
            seg = Segment.create(path, c2s, s2c, secret);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(path); // the next offer creates its own and says why if it cannot
            return;
        }
        synchronized (spareLock) {
            if (spare == null && !spareClosed) {
                spare = new Spare(path, secret, seg);
                return;
            }
        }
        deleteQuietly(path);
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a seg-<pid>-* file is removed as stale once this process is gone
        }
    }

    @Override
    public boolean catchUp() {
        return listener.catchUp();
    }

    @Override
    public void refuse(ShmLink link, String reason) {
        forget(link.channel);
        if (link.kept != null) {
            NextPairing.refuse(link.kept, reason); // the reason in the segment: the doorbell loop reads the channel
        } else {
            try {
                writeFully(link.channel, Wire.encode(new Wire.No(reason)));
            } catch (IOException e) {
                // the client gave up already; it falls back on its own
            }
        }
        DoorbellLoop.get().close(link.channel); // out of the doorbell loop's watch first, where a kept one is
    }

    @Override
    public void release(ShmLink link) {
        forget(link.channel);
        link.release();
    }

    @Override
    public FastConnection connection(Pairing<ShmLink> pairing, SocketHooks hooks) {
        ShmLink link = pairing.link();
        return new RingConnection(link.id(), "shm", link.medium(), hooks, settings.spinIterations());
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

    // ---- accepting thread ----

    /**
     * The connection an accepting thread holds while it waits for its pairing ({@link #awaitAccepted}): a
     * request for it that this thread decides (its catch-up reads the client's key) needs no kernel lookup,
     * since the accept returned it just now (see {@link #check}).
     */
    private static final ThreadLocal<ConnectionKey> ACCEPTED = new ThreadLocal<>();

    @Override
    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
        return table.awaitPairing(key, wait, hooks);
    }

    @Override
    public PairingResult awaitAccepted(ConnectionKey key, Duration wait, SocketHooks hooks) {
        ACCEPTED.set(key); // nothing in the table's wait accepts again on this thread: no outer key to keep
        try {
            return table.awaitPairing(key, wait, hooks);
        } finally {
            ACCEPTED.remove();
        }
    }

    /**
     * The listener's thread failed (see {@link RendezvousListener.HelloHandler#listenerFailed}): every
     * accept from now on is TCP at once, naming the failure, and the kept channels close (their clients,
     * waiting for an answer or not, see the end and stay on TCP instead of waiting their pairing wait).
     */
    void listenerFailed(String why) {
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_LISTEN, 0, "shm", "listener " + listener.path() + " failed: " + why, null);
        }
        table.close("shm listener failed: " + why);
        closeKept();
    }

    /** Closes the kept channels: their clients see the end of file and drop their halves. */
    private void closeKept() {
        if (kept != null) {
            for (SocketChannel ch : kept.keySet()) {
                if (kept.remove(ch) != null) DoorbellLoop.get().close(ch);
            }
        }
    }

    /**
     * Stops deciding (see {@link PairingTable#close}) and the rendezvous: its socket file is gone on
     * return. Connections already handed out by {@link #awaitPairing} are not affected.
     */
    @Override
    public void close() {
        closing = true;
        IN_PROCESS.remove(listener.path());
        table.close();
        listener.close();
        closeKept();
        try {
            listener.join(2000);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
        Spare s;
        synchronized (spareLock) {
            spareClosed = true;
            s = spare;
            spare = null;
        }
        if (s != null) deleteQuietly(s.path);
    }

    /** Accepting threads waiting for an announced client right now (tests). */
    int waitingAccepts() {
        return table.waitingAccepts() + keyWaits.get();
    }

    /** Accepting threads reading a COMMIT themselves right now, of the pairings offered (tests). */
    int claimingAccepts() {
        return offeredDirect.stream().mapToInt(ShmLink::claimers).sum();
    }

    int entryCount() {
        return table.size();
    }

    /** Whether the key is marked TCP (tests). */
    boolean decidedTcp(ConnectionKey key) {
        return table.entry(key) == PairingTable.Entry.TCP;
    }
}
