package io.sora.agent;

import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleSet;
import io.sora.transport.Announcement;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.Transport;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a client connection's path is decided. Before the TCP connect, a connection a {@code connect}
 * rule names announces itself to the server's listener (where the medium has announcements), so that
 * the server never waits for clients that will not pair ({@link Announcement}); after the connect, the
 * rule's transport pairs it, and {@link PathRecorder} records the outcome.
 *
 * <p>Only sockets of exactly {@code java.net.Socket} and the JDK's own TLS sockets are paired
 * ({@link ServedSockets}): other subclasses may override the streams, and a paired connection whose bytes
 * the subclass sends over TCP anyway would lose data.
 */
final class ClientDecisions {
    /** An announcement whose connect neither returned nor failed this long ago is withdrawn. */
    private static final long ANNOUNCEMENT_TTL_NANOS = 10_000_000_000L;
    /** How recent an announcement's look at the descriptor budget stands for the decision's ({@link #decideNow}). */
    private static final long BUDGET_REUSE_NANOS = 10_000_000L;

    private final RuleSet rules;
    private final Map<Provider, Transport> transports;
    private final PathRecorder recorder;
    /** Announcements made before a TCP connect, until it returns or fails (identity keys: Socket keeps Object's equals). */
    private final Map<Object, Announced> announcements = new ConcurrentHashMap<>();

    /**
     * An announcement, with the rule and options it was made under (reused by the decision after the connect:
     * matching the rules again, interpreted in a cold JVM's first connections, cost about 3 % of a client's
     * set-up) and the remote and wait they were for.
     */
    private record Announced(Announcement announcement, long sinceNanos, InetSocketAddress remote, Rule rule,
                             PairingOptions options, java.time.Duration maxWait) {}

    ClientDecisions(RuleSet rules, Map<Provider, Transport> transports, PathRecorder recorder) {
        this.rules = rules;
        this.transports = transports;
        this.recorder = recorder;
    }

    /** Before the TCP connect: a pairing client announces itself to the server's listener. */
    void connecting(Socket socket, SocketAddress endpoint) {
        if (ServedSockets.socket(socket.getClass())) announce(socket, endpoint);
    }

    /**
     * Before the TCP connect of {@code owner} (a {@code java.net.Socket}, or a {@code SocketChannel}:
     * {@link Channels}): a pairing client announces itself to the server's listener.
     */
    void announce(Object owner, SocketAddress endpoint) {
        announce(owner, endpoint, null);
    }

    /**
     * As {@link #announce(Object, SocketAddress)}; {@code maxWait} (null: the rule's wait): the longest the
     * announcement may take, the rule's wait when shorter (a non-blocking connect's, as its pairing:
     * {@link #decide(Object, Socket, java.time.Duration)}).
     */
    void announce(Object owner, SocketAddress endpoint, java.time.Duration maxWait) {
        if (rules.isEmpty() || !(endpoint instanceof InetSocketAddress remote) || remote.isUnresolved()) {
            return;
        }
        Rule rule = rules.matchConnect(remote).orElse(null);
        if (rule == null) return;
        if (rule.provider() == Provider.SHM) PathWarmup.begin();
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) return;
        // without the file descriptors a paired connection needs: no announcement, and decide() records
        // the connection on TCP with the reason
        if (DescriptorBudget.PROCESS.refusal() != null) return;
        // from here a pairing will be decided for this socket: a stream asked for by another thread once the
        // JDK has marked it connected (before the connect's hook decides) waits for the decision
        if (owner instanceof Socket s) deciding.putIfAbsent(s, new Decision());
        // A JVM's first pairing waits for the start-up warm-up here, before it announces itself:
        // pairing while the warm-up and the compilations it queued take the CPU was slow enough on
        // one CPU for either side's pairing wait to run out (TCP then). The server has seen nothing
        // yet, so it waits for nothing meanwhile.
        PathWarmup.applicationPairing();
        PathWarmup.awaitDataPath();
        if (!announcements.isEmpty()) sweepAnnouncements();
        PairingOptions options = RuleTerms.options(rule, maxWait);
        Announcement a = transport.announce(remote, options, () -> bindLocally(owner));
        if (a != null) {
            Announced old = announcements.put(owner, new Announced(a, System.nanoTime(), remote, rule, options, maxWait));
            if (old != null) old.announcement().close();
            // closed by another thread while the announcement was made (an rdma one takes an RDMA CM
            // handshake): its close found nothing to withdraw, and a channel's connect that then throws
            // withdraws nothing either; found in review, 2026-11-29
            if (closed(owner)) withdraw(owner);
        }
    }

    /**
     * The local end of {@code owner}, bound to an ephemeral port first if the application did not bind it
     * (rdma names its RDMA connection, made before the TCP connect, after the port: {@link
     * Transport.LocalEnd}). A socket bound before its connect keeps that port through the connect.
     */
    private static InetSocketAddress bindLocally(Object owner) throws java.io.IOException {
        if (owner instanceof Socket s) {
            if (!s.isBound()) s.bind(null);
            if (s.getLocalSocketAddress() instanceof InetSocketAddress a) return a;
        } else if (owner instanceof java.nio.channels.SocketChannel ch) {
            if (ch.getLocalAddress() == null) ch.bind(null);
            if (ch.getLocalAddress() instanceof InetSocketAddress a) return a;
        }
        throw new java.io.IOException("no local address for " + owner.getClass().getName());
    }

    private static boolean closed(Object owner) {
        return owner instanceof Socket s ? s.isClosed() : owner instanceof java.nio.channels.Channel ch && !ch.isOpen();
    }

    /** The TCP connect failed (or the socket closed before it returned): the announcement is withdrawn. */
    void withdraw(Object owner) {
        Announcement a = takeAnnouncement(owner);
        if (a != null) a.close();
        if (owner instanceof Socket s) decided(s);
    }

    /** After the TCP connect: the connect rule's transport pairs the connection, or it stays on TCP. */
    void connected(Socket socket) {
        if (ServedSockets.socket(socket.getClass())) decide(socket, socket);
        else notServed(socket);
    }

    /**
     * Told of a socket subclass whose connection a rule names (the agent's {@code UnservedApis}: said once per
     * class, with the fix); nothing until the agent sets it.
     */
    volatile java.util.function.BiConsumer<Class<?>, Boolean> notServed = (type, server) -> { };

    /**
     * A connected socket of a subclass of {@code java.net.Socket} other than the JDK's TLS socket (another
     * provider's TLS socket, say: a TLS socket layered on a plain one is the plain one's connection, decided
     * as any): never paired (see the class comment). Where a connect rule names its connection, it is recorded on TCP
     * with why (the trace's path event, {@code sora status}) and said once per class, rather than left out
     * silently (until 2026-11-29 such connections left no trace at all).
     */
    private void notServed(Socket socket) {
        if (rules.isEmpty() || !(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote) || remote.isUnresolved()) {
            return;
        }
        Rule rule = rules.matchConnect(remote).orElse(null);
        if (rule == null) return;
        recorder.tcp(socket, Side.CLIENT, io.sora.agent.instrumentation.UnservedApis.notServedReason(socket.getClass(), false)
                + " (" + RuleTerms.where(rule) + ")", true);
        notServed.accept(socket.getClass(), false);
    }

    /**
     * After the TCP connect of {@code owner} (the socket itself, or the {@code SocketChannel} whose
     * adaptor {@code socket} is): the connect rule's transport pairs it, or it stays on TCP.
     */
    void decide(Object owner, Socket socket) {
        decide(owner, socket, null);
    }

    /**
     * As {@link #decide(Object, Socket)}; {@code maxWait} (null: the rule's wait): the longest this
     * thread waits for the server's answer, the rule's wait when shorter (a non-blocking connect's
     * {@code finishConnect}: docs/nio.md).
     */
    void decide(Object owner, Socket socket, java.time.Duration maxWait) {
        if (rules.isEmpty()) {
            return;
        }
        try {
            decideNow(owner, socket, maxWait);
        } finally {
            decided(socket);
        }
    }

    /** {@code socket}'s pairing is decided (or will not be): threads waiting for it go on. */
    private void decided(Socket socket) {
        Decision d = deciding.remove(socket);
        if (d != null) d.done.countDown();
    }

    /** A pairing to be decided, on the connecting thread. A final class, not a record (NoGeneratedRecordMethodsTest). */
    private static final class Decision {
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        final Thread deciding = Thread.currentThread();
    }

    private void decideNow(Object owner, Socket socket, java.time.Duration maxWait) {
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        Announced taken = takeAnnounced(owner);
        Announcement announced = taken == null ? null : taken.announcement();
        // the rule the announcement was made under, for the same remote (a connect's remote is its endpoint)
        boolean same = taken != null && remote.equals(taken.remote());
        Rule rule = same ? taken.rule() : rules.matchConnect(remote).orElse(null);
        if (rule == null) {
            if (announced != null) announced.close();
            recorder.tcp(socket, Side.CLIENT, "no connect rule matches " + remote, false);
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            if (announced != null) announced.close();
            recorder.tcp(socket, Side.CLIENT, rule.provider().keyword() + " unavailable: " + RuleTerms.cause(transport)
                    + " (" + RuleTerms.where(rule) + ")", true);
            return;
        }
        // asked at the announcement for this very pairing: not again if that was a moment ago (a connect can
        // take its timeout, and the budget is for now)
        String scarce = same && System.nanoTime() - taken.sinceNanos() < BUDGET_REUSE_NANOS ? null
                : DescriptorBudget.PROCESS.refusal();
        if (scarce != null) {
            if (announced != null) announced.close();
            recorder.tcp(socket, Side.CLIENT, scarce, true);
            return;
        }
        ConnectionKey key = new ConnectionKey(local, remote);
        PairingOptions options = same && java.util.Objects.equals(maxWait, taken.maxWait()) ? taken.options()
                : RuleTerms.options(rule, maxWait);
        // a socket's announcement put it (a channel's puts none: its adaptor's, as before)
        if (taken == null || !(owner instanceof Socket)) deciding.putIfAbsent(socket, new Decision());
        recorder.pairing(Side.CLIENT, key, rule);
        PairingResult result;
        try {
            result = transport.connect(key, options, PairedSocket.hooks(socket), announced);
        } catch (RuntimeException e) {
            result = PathRecorder.failed(e);
        }
        recorder.record(socket, Side.CLIENT, key, rule, recorder.paired(result));
    }

    /**
     * Sockets whose pairing is to be decided, from their announcement (or the start of the decision) until
     * it is decided or withdrawn: the JDK marks a socket connected before its connect returns, and so
     * before the pairing is decided.
     */
    private final Map<Socket, Decision> deciding = new ConcurrentHashMap<>();

    /** The longest another thread waits for a pairing under way (each of its steps is bounded by the rule's wait). */
    private static final long DECISION_WAIT_SECONDS = 60;

    /**
     * Waits until {@code socket}'s pairing, if one runs now on another thread, is decided: a stream asked for
     * meanwhile (another thread's {@code getInputStream} while the connect has not returned) would be the TCP
     * socket's, which the JDK then caches for good, while the peer writes to the fast path (found in review,
     * 2026-11-29). True if it waited.
     */
    boolean awaitDecision(Socket socket) {
        Decision d = deciding.get(socket);
        // not on the connecting thread itself; and a thread holding the socket's monitor would keep the
        // connecting thread from the socket's synchronized methods (JDK 17's getSoTimeout, read as the
        // pairing begins): no wait then either
        if (d == null || d.deciding == Thread.currentThread() || Thread.holdsLock(socket)) return false;
        try {
            return d.done.await(DECISION_WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Detach: every announcement still out is withdrawn. */
    void stop() {
        announcements.values().forEach(a -> a.announcement().close());
        announcements.clear();
    }

    /** The socket's announcement, removed from the table; null when it made none. */
    private Announcement takeAnnouncement(Object owner) {
        Announced a = takeAnnounced(owner);
        return a == null ? null : a.announcement();
    }

    private Announced takeAnnounced(Object owner) {
        return announcements.isEmpty() ? null : announcements.remove(owner);
    }

    private void sweepAnnouncements() {
        long now = System.nanoTime();
        announcements.entrySet().removeIf(e -> {
            if (now - e.getValue().sinceNanos() < ANNOUNCEMENT_TTL_NANOS) return false;
            e.getValue().announcement().close();
            return true;
        });
    }
}
