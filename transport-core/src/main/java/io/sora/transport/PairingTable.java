package io.sora.transport;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The server side of pairing, the same for every medium: the pairings of one listener by connection
 * key, the accept policy, and what {@code accept()} waits for. A {@link PairingMedium} supplies the
 * medium's checks, offer, refusal, release and connection; its threads hand requests in with
 * {@link #request}, and the accepting thread claims the result with {@link #awaitPairing}.
 *
 * <p>Each key is decided exactly once, one way: the first of "request registered" and "accept
 * decided TCP" wins the key's entry in a {@link ConcurrentHashMap}, so both ends always agree. A
 * request that comes after accept decided TCP is refused ("server already accepted on TCP"); an
 * accept that comes after a request was refused by the policy, or after its client left, reports
 * why at once. TCP marks outlive their last use by {@link #TCP_MARK_TTL_NANOS}.
 *
 * <p>What accept waits for depends on the medium. Where clients announce themselves before their TCP
 * connect ({@link #announced}: shm, docs/shm.md "Why ANNOUNCE"; rdma, whose RDMA connection made before
 * the TCP connect is the announcement, docs/rdma.md "Pairing"), an accept whose request is not there
 * waits only until every client announced at that moment has sent its request or withdrawn (or its
 * announcement is older than the medium's age limit), at most the pairing wait; with none announced it
 * decides TCP at once, so a client without sora never waits. Otherwise it waits for the request up to
 * the pairing wait. Then, with a request, it waits for the COMMIT (at most
 * max(2 s, 10 x wait)).
 *
 * <p>Thread-safe. No thread of its own: requests run on the medium's thread, accepts on the
 * application's.
 *
 * @param <L> the medium's link (see {@link PairingMedium})
 */
public final class PairingTable<L> {
    /** How long a "this key is TCP" mark outlives its last use; it only has to outlast late requests. */
    public static final long TCP_MARK_TTL_NANOS = 60_000_000_000L;
    /**
     * How long a mark still carrying an aborted pairing's settlement outlives its last use: its accept may
     * come late (a long accept backlog), and without the settlement it would hand the application what the
     * medium must settle first (RDMA: a proof on the TCP stream). A few hundred bytes each.
     */
    static final long SETTLEMENT_MARK_TTL_NANOS = 10 * TCP_MARK_TTL_NANOS;

    private static final long SWEEP_EVERY_NANOS = 1_000_000_000L;
    private static final long MIN_COMMIT_WAIT_NANOS = 2_000_000_000L;
    /** How long an accept waiting for announced clients sleeps before it reads their channels itself. */
    static final long CATCH_UP_SLICE_MILLIS = 1;

    /**
     * The key's connection stays on TCP; {@code reason} says why when a request was refused or a pairing
     * aborted (else null). {@code settlement}: the aborted pairing's, which the first accept of the key to
     * find it settles (it is then dropped from the mark); null: none.
     */
    private record TcpMark(long markedNanos, long awaitStartNanos, String reason, Settlement settlement) {
        TcpMark(long markedNanos, long awaitStartNanos, String reason) {
            this(markedNanos, awaitStartNanos, reason, null);
        }
    }

    /** A key's entry, for tests and diagnostics. */
    public enum Entry { NONE, PAIRING, TCP }

    final PairingMedium<L> medium;
    private final AcceptPolicy policy;
    private final boolean clientsAnnounce;
    /** Per key: a {@link Pairing} under way or committed and unclaimed, or a {@link TcpMark}. */
    private final ConcurrentHashMap<ConnectionKey, Object> entries = new ConcurrentHashMap<>();
    /** Channels that announced a request and have not sent it yet, with when. */
    private final ConcurrentHashMap<Object, Long> announced = new ConcurrentHashMap<>();
    private final Object arrivals = new Object();
    /** Accepting threads in {@code arrivals.wait}; guarded by {@code arrivals}. */
    private int waiting;
    private volatile boolean closed;
    /** Why it closed (set before {@link #closed}). */
    private volatile String closedWhy;
    private volatile long lastSweepNanos;
    /** How long an announcement makes accepts wait (see {@link #ANNOUNCE_TTL_NANOS}). */
    private final long announceTtlNanos;
    /** {@link System#nanoTime}, or a test's clock. */
    private final java.util.function.LongSupplier clock;

    /**
     * @param clientsAnnounce true when the medium's clients announce themselves before their TCP
     *                        connect ({@link #announced}), so that accept waits only for them
     */
    public PairingTable(PairingMedium<L> medium, AcceptPolicy policy, boolean clientsAnnounce) {
        this(medium, policy, clientsAnnounce, ANNOUNCE_TTL_NANOS);
    }

    /**
     * @param announceTtlNanos how long an announcement makes accepts wait ({@link #ANNOUNCE_TTL_NANOS} at
     *                         least): a medium whose pairing may take longer (rdma under emulation, whose
     *                         pairing-wait floor is seconds) gives its floor
     */
    public PairingTable(PairingMedium<L> medium, AcceptPolicy policy, boolean clientsAnnounce, long announceTtlNanos) {
        this(medium, policy, clientsAnnounce, System::nanoTime, announceTtlNanos);
    }

    /** @param clock the time of marks, announcements and sweeps (tests move it; waits still take real time) */
    PairingTable(PairingMedium<L> medium, AcceptPolicy policy, boolean clientsAnnounce, java.util.function.LongSupplier clock) {
        this(medium, policy, clientsAnnounce, clock, ANNOUNCE_TTL_NANOS);
    }

    /** As {@link #PairingTable(PairingMedium, AcceptPolicy, boolean, java.util.function.LongSupplier)}, with the age limit. */
    PairingTable(PairingMedium<L> medium, AcceptPolicy policy, boolean clientsAnnounce, java.util.function.LongSupplier clock,
                 long announceTtlNanos) {
        this.announceTtlNanos = Math.max(ANNOUNCE_TTL_NANOS, announceTtlNanos);
        this.medium = medium;
        this.notAnnounced = "client announced no pairing (no sora, or no " + medium.name() + " rule for this server)";
        this.policy = policy;
        this.clientsAnnounce = clientsAnnounce;
        this.clock = clock;
        this.lastSweepNanos = clock.getAsLong();
    }

    // ---------------------------------------------------------------- the medium's threads

    /** A client announced, on {@code channel}, a request that will follow its TCP connect. */
    public void announced(Object channel) {
        announced.put(channel, clock.getAsLong());
    }

    /** An announced channel ended without a request (the client's connect failed, or it left). */
    public void withdrawn(Object channel) {
        if (announced.remove(channel) != null) wakeAccepts();
    }

    /**
     * A client's request to pair connection {@code key}, on {@code link}: checked by the medium, then
     * decided by the policy, registered, and offered; or refused with the reason. {@code announcedOn}
     * is the channel that announced it (null if none): no longer counted as announced afterwards.
     */
    public void request(L link, ConnectionKey key, Object announcedOn) {
        try {
            decide(link, key, announcedOn);
        } finally {
            // after the entry (if any) is in the map: a waiting accept sees one or the other
            if (announcedOn != null) withdrawn(announcedOn);
        }
    }

    private void decide(L link, ConnectionKey key, Object announcedOn) {
        sweep(clock.getAsLong());
        String refusal;
        try {
            refusal = medium.check(link, key);
        } catch (IOException | RuntimeException e) {
            refusal = "pairing check failed: " + e.getMessage();
        }
        if (refusal != null) {
            medium.refuse(link, refusal);
            return;
        }
        AcceptPolicy.Decision decision;
        try {
            decision = policy.decide(key);
        } catch (RuntimeException e) {
            medium.refuse(link, "accept policy failed for " + key + ": " + e);
            return;
        }
        if (decision instanceof AcceptPolicy.Refuse r) {
            // the key is checked: the accept side reports the same reason
            long now = clock.getAsLong();
            entries.putIfAbsent(key, new TcpMark(now, now, r.reason()));
            wakeAccepts();
            medium.refuse(link, r.reason());
            return;
        }
        Pairing<L> pairing = new Pairing<>(this, key, link);
        Object prev = entries.putIfAbsent(key, pairing);
        Long announcedAt = announcedOn == null ? null : announced.get(announcedOn);
        if (prev instanceof TcpMark mark && mark.reason() == null && announcedAt != null
                && mark.awaitStartNanos() - announcedAt < 0 && entries.replace(key, prev, pairing)) {
            // The accept that made this mark had every announcement made before its connection (it
            // caught up) before this client announced itself, and the announcement precedes its TCP
            // connect: that accept was an earlier connection's with the same four-tuple (loopback
            // reuses ports in TIME_WAIT at once), not this one's. Dated when it caught up, not when it
            // marked: it may have marked after waiting for other clients' announcements, by which time
            // this client had announced (seen as 'server already accepted on TCP'). Not its start
            // either: its own connection's announcement may have been read after it (the catch-up).
            prev = null;
        }
        if (prev instanceof TcpMark mark) {
            long after = (clock.getAsLong() - mark.awaitStartNanos()) / 1_000_000L;
            medium.refuse(link, "server already accepted on TCP (pairing request arrived after " + after + " ms)");
            return;
        }
        if (prev != null) {
            medium.refuse(link, "duplicate pairing request for " + key);
            return;
        }
        if (closed) {
            // close() may have swept the table before this entry went in
            pairing.abort(medium.name() + " listener closed");
            return;
        }
        wakeAccepts();
        try {
            medium.offer(pairing, ((AcceptPolicy.Allow) decision).options());
        } catch (IOException | RuntimeException e) {
            String why = e instanceof IOException && e.getMessage() != null ? e.getMessage() : "could not offer: " + e;
            if (pairing.state() == Pairing.State.HELLO) medium.refuse(link, why);
            pairing.abort(why);
        }
    }

    /** The pairing was aborted: its key stays TCP, with the reason for an accept that comes later. */
    void aborted(Pairing<L> pairing, String reason) {
        long now = clock.getAsLong();
        // a mark without a reason is an accept's (see decides): an aborted pairing's must carry one
        if (reason == null) reason = "pairing aborted";
        entries.replace(pairing.key(), pairing, new TcpMark(now, now, reason, medium.settlement(pairing.link())));
    }

    private void wakeAccepts() {
        synchronized (arrivals) {
            arrivals.notifyAll();
        }
    }

    // ---------------------------------------------------------------- the accepting thread

    /**
     * Called right after {@code accept()} returned the TCP socket named by {@code key}; see the class
     * comment for what it waits for. Never throws (but for a medium's failing {@code connection}).
     */
    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
        long start = clock.getAsLong();
        sweep(start);
        try {
            boolean[] aged = new boolean[1];
            Object e = awaitEntry(key, start, wait, aged);
            if (e instanceof TcpMark m) {
                PairingResult f = new PairingResult.Fallback(closed ? closedWhy
                        : m.reason() != null ? m.reason() : noRequest(start, wait, aged[0]));
                return m.settlement() == null ? f : settleMark(key, f, hooks, wait);
            }
            @SuppressWarnings("unchecked")
            Pairing<L> p = (Pairing<L>) e;
            return claim(key, p, wait, hooks);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            // Dated now, not at the start: the catch-up may have read this connection's announcement
            // after the start, and a request announced before the mark's date must be refused (decide)
            long now = clock.getAsLong();
            Object e = entries.compute(key, (k, v) -> v instanceof Pairing || v instanceof TcpMark m && m.settlement() != null
                    ? v : new TcpMark(now, now, null));
            PairingResult f = new PairingResult.Fallback("interrupted while waiting for pairing");
            if (e instanceof Pairing<?> any) {
                @SuppressWarnings("unchecked")
                Pairing<L> p = (Pairing<L>) any;
                p.abort("accepting thread interrupted");
                // the COMMIT won the race with the interrupt: the client is paired, so this side is too
                // (the interrupt status stays set, as an accept that returned a socket leaves it)
                if (p.state() == Pairing.State.COMMITTED) return settle(p, claimed(key, p, hooks), hooks, wait);
                return settle(p, f, hooks, wait);
            }
            return e instanceof TcpMark m && m.settlement() != null ? settleMark(key, f, hooks, wait) : f;
        }
    }

    /**
     * Waits for the key's entry while a request may still come (see the class comment), at most
     * {@code wait}; then atomically marks the key TCP if no entry came.
     */
    private Object awaitEntry(ConnectionKey key, long start, Duration wait, boolean[] aged) throws InterruptedException {
        long deadline = start + wait.toNanos();
        // Announcements written before this connection's TCP connect may be unread still: have them
        // read now. Not under 'arrivals': the medium's thread holds its own lock while it hands a
        // request in, which takes 'arrivals'.
        // The mark this accept may leave is dated after the catch-up, not at the accept's start: the
        // announcement of this very connection may have been read by the catch-up, after the start,
        // and a request whose announcement precedes the mark's date is this connection's, refused
        // (only a later announcement means a new connection reusing the four-tuple; see decide)
        long markBase = start;
        if (clientsAnnounce && !(entries.get(key) instanceof Pairing)) {
            // Even when a mark decides already: it may be swept before this accept marks the key,
            // and the mark it then leaves must be dated after this connection's announcement was read
            boolean complete = medium.catchUp();
            markBase = clock.getAsLong();
            if (!complete) return unread(key);
        }
        Set<Object> pending = null;
        for (;;) {
            long left;
            synchronized (arrivals) {
                if (!waitsStill(key, pending, aged)) break;
                if (clientsAnnounce && pending == null) {
                    // only those still counting: one past its age at the start is not why this accept ends
                    long now = clock.getAsLong();
                    pending = new HashSet<>();
                    for (Map.Entry<Object, Long> a : announced.entrySet()) {
                        if (fresh(a.getValue(), now)) pending.add(a.getKey());
                    }
                    if (!waitsStill(key, pending, aged)) break; // none left fresh, or a request came meanwhile
                }
                left = deadline - clock.getAsLong();
                if (left <= 0) break;
            }
            // where the clients can wake this thread themselves (shm's kept segments), the medium waits
            boolean waited = clientsAnnounce
                    && medium.awaitAnnounced(pending, Math.min(left, CATCH_UP_SLICE_MILLIS * 1_000_000L));
            if (!waited) synchronized (arrivals) {
                if (!waitsStill(key, pending, aged)) break; // a request came between the two locks (its wake-up is gone)
                left = deadline - clock.getAsLong();
                if (left <= 0) break;
                waiting++;
                try {
                    // Where clients announce, a slice at a time: the request may sit unread in its
                    // channel while the medium's thread waits for a CPU (two cold JVMs and their JIT
                    // threads on one CPU: a non-blocking accept's 20 ms ran out, the connection stayed
                    // TCP), so between slices this thread reads the channels itself (below).
                    long millis = Math.max(1, left / 1_000_000L);
                    arrivals.wait(clientsAnnounce ? Math.min(millis, CATCH_UP_SLICE_MILLIS) : millis);
                } finally {
                    waiting--;
                }
            }
            // not under 'arrivals' (see above); a request read here is in the map when it returns
            if (clientsAnnounce && !closed && !medium.catchUp()) return unread(key);
        }
        long base = markBase;
        return entries.compute(key, (k, v) -> {
            if (v instanceof Pairing) return v;
            // A refused request, or a pairing the client gave up on, keeps its reason for the accept
            // side; refreshed like any mark this accept uses, or a sweep could drop it between this
            // accept and a late request of the same connection (then paired: both ends would differ).
            if (v instanceof TcpMark m && m.reason() != null) {
                return new TcpMark(clock.getAsLong(), m.awaitStartNanos(), m.reason(), m.settlement());
            }
            // Absent: too late for a request. A previous mark (tuple reuse) is refreshed, still TCP.
            return new TcpMark(clock.getAsLong(), base, null);
        });
    }

    /**
     * Under {@code arrivals}: whether the accept of {@code key} still waits (no entry decides it, the table
     * is open, and, where clients announce, one of those announced at the accept's start, {@code pending},
     * has not yet sent its request or withdrawn; null at the first look: any announced now). Sets
     * {@code aged[0]} when one of {@code pending} left it only by its age.
     */
    private boolean waitsStill(ConnectionKey key, Set<Object> pending, boolean[] aged) {
        if ((clientsAnnounce ? decides(entries.get(key)) : entries.get(key) != null) || closed) return false;
        if (!clientsAnnounce) return true;
        long now = clock.getAsLong();
        if (pending == null) {
            for (Long at : announced.values()) {
                if (fresh(at, now)) return true;
            }
            return false;
        }
        // gone from the announced (sent its request, or withdrew), or past its age (noted: the reason says so)
        pending.removeIf(ch -> {
            Long at = announced.get(ch);
            if (fresh(at, now)) return false;
            if (at != null) aged[0] = true;
            return true;
        });
        return !pending.isEmpty();
    }

    /** Whether an announcement made at {@code at} (null: none) still makes accepts wait ({@link #announceTtlNanos}). */
    private boolean fresh(Long at, long now) {
        return at != null && now - at < announceTtlNanos;
    }

    /**
     * How long an announcement makes other accepts wait: a client announces before its TCP connect, which
     * takes microseconds, or seconds when its SYN is dropped (a full backlog: retried after 1, 3, 7 s ...);
     * an announcement on a kept segment had no age limit, and every accept of a plain client waited its
     * whole pairing wait while such a connect lasted, about ten accepts a second exactly while the server
     * was overloaded (found in review, 2026-11-29). Past this age the announcing client's own connection, if
     * it comes, is decided as any: its request is read if it is there, else TCP.
     */
    static final long ANNOUNCE_TTL_NANOS = 1_000_000_000L;

    /**
     * The catch-up could not read every announcement (the medium's listener cannot accept right now):
     * this connection's own may be among them, and a request read later could not be told from a new
     * connection's reusing the four-tuple. So, unless its request is in the table already, the key is
     * TCP with a reason, which no later request replaces (it is refused): both ends stay on TCP.
     */
    private Object unread(ConnectionKey key) {
        long now = clock.getAsLong();
        String why = medium.name() + " listener cannot read its rendezvous right now (accepting paused after a"
                + " failure: out of file descriptors?)";
        return entries.compute(key, (k, v) -> v instanceof Pairing ? v
                : v instanceof TcpMark m && m.reason() != null ? new TcpMark(now, m.awaitStartNanos(), m.reason(), m.settlement())
                : new TcpMark(now, now, why));
    }

    /**
     * Whether an entry decides the accept of a connection of its key where clients announce
     * themselves. A TCP mark without a reason is left by an accept, so when an accept starts it can
     * only be an earlier connection's with the same four-tuple (loopback reuses ports at once): it
     * decides nothing for this one, which still catches up and waits for the announced clients (a
     * request of this connection replaces it: see {@link #decide}). Where clients do not announce, a
     * request cannot be told from a late one of the earlier connection, and any entry decides.
     */
    private static boolean decides(Object entry) {
        return entry != null && !(entry instanceof TcpMark m && m.reason() == null);
    }

    /**
     * Why an accept that found no request decided TCP: its wait ran out, announcements it waited for
     * passed their age limit ({@code aged}: their clients, this one's maybe among them, too slow to send
     * their requests), or no client had announced anything.
     */
    private String noRequest(long start, Duration wait, boolean aged) {
        long waited = clock.getAsLong() - start;
        if (waited >= wait.toNanos()) return "no pairing request within " + wait.toMillis() + " ms";
        if (aged) {
            return "no pairing request within " + announceTtlNanos / 1_000_000 + " ms of a client's announcement (the"
                    + " longest an announcement makes accepts wait; a starved client JVM?)";
        }
        return notAnnounced;
    }

    /** The reason of every accept whose client announced nothing (a client without sora): made once, not per connection. */
    private final String notAnnounced;

    private PairingResult claim(ConnectionKey key, Pairing<L> p, Duration wait, SocketHooks hooks) throws InterruptedException {
        long bound = Math.max(MIN_COMMIT_WAIT_NANOS, 10 * wait.toNanos());
        if (medium.awaitCommit(p, bound) != Pairing.State.COMMITTED) {
            // The abort releases the link, so a client that believes it is paired fails loudly.
            p.abort("no COMMIT within " + bound / 1_000_000L + " ms");
            if (p.state() != Pairing.State.COMMITTED) {
                return settle(p, new PairingResult.Fallback(p.reason()), hooks, wait);
            }
        }
        return settle(p, claimed(key, p, hooks), hooks, wait);
    }

    /**
     * The pairing {@code p} this accept claimed or saw aborted: its settlement, if the medium has one, is
     * this accept's to run (and no longer the mark's its abort left, which a later accept of a connection
     * reusing the four-tuple would otherwise run too).
     */
    private PairingResult settle(Pairing<L> p, PairingResult r, SocketHooks hooks, Duration wait) {
        Settlement s = medium.settlement(p.link());
        if (s == null) return r;
        entries.computeIfPresent(p.key(), (k, v) -> v instanceof TcpMark m && m.settlement() == s
                ? new TcpMark(m.markedNanos(), m.awaitStartNanos(), m.reason()) : v);
        return s.settle(r, hooks, wait);
    }

    /** The settlement of the aborted pairing whose mark this accept found, taken from the mark (once) and run. */
    private PairingResult settleMark(ConnectionKey key, PairingResult f, SocketHooks hooks, Duration wait) {
        Settlement[] taken = new Settlement[1];
        entries.computeIfPresent(key, (k, v) -> {
            if (!(v instanceof TcpMark m) || m.settlement() == null) return v;
            taken[0] = m.settlement();
            return new TcpMark(m.markedNanos(), m.awaitStartNanos(), m.reason());
        });
        return taken[0] == null ? f : taken[0].settle(f, hooks, wait);
    }

    /** A committed pairing, taken out of the table and handed to the accepted socket (unless it expired meanwhile). */
    private PairingResult claimed(ConnectionKey key, Pairing<L> p, SocketHooks hooks) {
        if (!p.claim()) return new PairingResult.Fallback(p.reason() != null ? p.reason() : closedWhy);
        entries.remove(key, p);
        try {
            return new PairingResult.Paired(medium.connection(p, hooks));
        } catch (RuntimeException e) {
            // claimed, so nothing else releases it: the client sees its connection drop
            medium.release(p.link());
            return new PairingResult.Fallback("could not set up the paired connection: " + e);
        }
    }

    /** Drops expired TCP marks; at most about once a second. */
    private void sweep(long now) {
        if (now - lastSweepNanos < SWEEP_EVERY_NANOS) return;
        lastSweepNanos = now;
        entries.entrySet().removeIf(e -> e.getValue() instanceof TcpMark m
                && now - m.markedNanos() > (m.settlement() == null ? TCP_MARK_TTL_NANOS : SETTLEMENT_MARK_TTL_NANOS));
        long unclaimedTtl = medium.unclaimedTtlNanos();
        if (unclaimedTtl < 0) return;
        for (Object e : entries.values()) {
            if (e instanceof Pairing<?> p) {
                p.expire(now, unclaimedTtl, "committed, but no accept claimed it within "
                        + unclaimedTtl / 1_000_000_000L + " s (its connection was accepted already?)");
            }
        }
    }

    // ---------------------------------------------------------------- the listener's end

    /**
     * Stops deciding: waiting accepts return TCP ("&lt;medium&gt; listener closed"), pairings under way
     * are aborted, and committed ones nobody claimed are released, so their clients see the control
     * channel drop (as TCP resets connections still in the accept queue). Connections already claimed
     * are not affected. Idempotent.
     */
    public void close() {
        close(medium.name() + " listener closed");
    }

    /**
     * As {@link #close()}, with why (the listener failed, say): pending pairings are aborted with it, and
     * accepts from now on fall back at once with it.
     */
    public void close(String why) {
        if (closed) return;
        closedWhy = why;
        closed = true;
        wakeAccepts();
        for (Object e : entries.values()) {
            if (e instanceof Pairing<?> p) {
                p.abort(why);
                p.releaseUnclaimed(why); // committed: released unless an accept took it meanwhile
            }
        }
        // marks that carry a settlement stay for the accepts still to come (an accept of a backlog
        // connection after the listener failed, the server socket still open), which must run it
        entries.values().removeIf(v -> !(v instanceof TcpMark m && m.settlement() != null));
    }

    public boolean isClosed() {
        return closed;
    }

    // ---------------------------------------------------------------- tests and diagnostics

    /** What the table holds for {@code key}. */
    public Entry entry(ConnectionKey key) {
        Object e = entries.get(key);
        return e == null ? Entry.NONE : e instanceof TcpMark ? Entry.TCP : Entry.PAIRING;
    }

    /** The table's clock. */
    long now() {
        return clock.getAsLong();
    }

    /** The state of the key's pairing, or null when the key holds none. */
    public Pairing.State stateForTests(ConnectionKey key) {
        return entries.get(key) instanceof Pairing<?> p ? p.state() : null;
    }

    /** Keys held: pairings under way or unclaimed, and TCP marks not yet expired. */
    public int size() {
        return entries.size();
    }

    /** Accepting threads waiting for an announced client right now. */
    public int waitingAccepts() {
        synchronized (arrivals) {
            return waiting;
        }
    }
}
