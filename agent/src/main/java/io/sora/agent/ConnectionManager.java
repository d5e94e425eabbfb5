package io.sora.agent;

import io.sora.agent.bootstrap.SoraDelegate;
import io.sora.agent.status.ConnectionRegistry;
import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.agent.status.DetachedConnections;
import io.sora.agent.status.ProcessSockets;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleKind;
import io.sora.rules.RuleSet;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.Announcement;
import io.sora.transport.ConnectionIds;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.Transport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides, per connection, which path carries its bytes, and keeps the per-socket state that
 * retransformation cannot add as fields: a weak identity side table (neither Socket nor ServerSocket
 * overrides equals/hashCode, so a WeakHashMap is an identity map for them). Every connection a rule
 * matched is also entered in the {@link ConnectionRegistry} for the status view.
 *
 * <p>Only sockets of exactly {@code java.net.Socket} / {@code java.net.ServerSocket} are paired:
 * subclasses (SSL sockets above all) may override the streams, and a paired connection whose bytes
 * the subclass sends over TCP anyway would lose data.
 *
 * <p>Hot attach: server sockets bound before the agent arrived never pass through the bind advice, so
 * {@link #adopt} finds them in {@code /proc} and starts their listeners. Such a listener answers a
 * pairing request only once a {@code java.net.ServerSocket} really accepted that connection (the socket
 * might belong to a {@code ServerSocketChannel}, whose accepts sora never sees, and a pairing nobody
 * claims would swallow the client's bytes). A connection returned by an {@code accept()} that was
 * already running when the agent arrived is paired when the application first asks for its streams.
 */
final class ConnectionManager implements SoraDelegate {
    private final RuleSet rules;
    private final Map<Provider, Transport> transports;
    private final Tracer tracer;
    private final ConnectionRegistry registry;
    private final Map<Socket, PairedSocket> sockets = Collections.synchronizedMap(new WeakHashMap<>());
    private final Map<ServerSocket, Listeners> servers = Collections.synchronizedMap(new WeakHashMap<>());
    /** Listeners of server sockets bound before a hot attach, by port. Empty unless attached. */
    private final Map<Integer, Listeners> adopted = new ConcurrentHashMap<>();
    /** Connections that existed when the agent was attached: they stay on TCP, untouched. */
    private final Set<ConnectionKey> preexisting = ConcurrentHashMap.newKeySet();
    /** Connections a java.net.ServerSocket accepted, awaited by the policy of adopted listeners. */
    private final Set<ConnectionKey> confirmed = ConcurrentHashMap.newKeySet();
    /** Accepted sockets of adopted servers whose path is decided already. */
    private final Map<Socket, Boolean> decided = Collections.synchronizedMap(new WeakHashMap<>());
    /** Closes the fast path of a paired socket dropped unclosed; ended at detach ({@link #stop}). */
    private final SocketCleaner cleaner = new SocketCleaner();
    private volatile boolean stopped;

    ConnectionManager(RuleSet rules, Map<Provider, Transport> transports, Tracer tracer, ConnectionRegistry registry) {
        this.rules = rules;
        this.transports = transports;
        this.tracer = tracer;
        this.registry = registry;
    }

    /** A socket whose bytes move on a fast path. */
    /** The fast-path listeners of one server socket; {@code adopted} when bound before a hot attach. */
    record Listeners(InetSocketAddress bound, Map<Provider, ServerBinding> bindings, boolean adopted) {}

    /** Set on the agent's own threads (the warm-up) whose sockets the advice must leave alone. */
    static final ThreadLocal<Boolean> INTERNAL = new ThreadLocal<>();

    // ---------------------------------------------------------------- client side

    /** Announcements made before a TCP connect, until it returns or fails (identity keys: Socket keeps Object's equals). */
    private final Map<Socket, Announced> announcements = new ConcurrentHashMap<>();

    private record Announced(Announcement announcement, long sinceNanos) {}

    /** An announcement whose connect neither returned nor failed this long ago is withdrawn. */
    private static final long ANNOUNCEMENT_TTL_NANOS = 10_000_000_000L;

    /**
     * Before the TCP connect: a pairing client announces itself to the server's listener, so that the
     * server never waits for clients that will not pair (see {@link Announcement}).
     */
    @Override
    public void connecting(Socket socket, java.net.SocketAddress endpoint) {
        if (rules.isEmpty() || socket.getClass() != Socket.class || INTERNAL.get() != null
                || !(endpoint instanceof InetSocketAddress remote) || remote.isUnresolved()) {
            return;
        }
        Rule rule = rules.matchConnect(remote).orElse(null);
        if (rule == null) return;
        if (rule.provider() == Provider.SHM) PathWarmup.begin();
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) return;
        // A JVM's first pairing waits for the start-up warm-up here, before it announces itself:
        // pairing while the warm-up and the compilations it queued take the CPU was slow enough on
        // one CPU for either side's pairing wait to run out (TCP then). The server has seen nothing
        // yet, so it waits for nothing meanwhile.
        PathWarmup.awaitDataPath();
        if (!announcements.isEmpty()) sweepAnnouncements();
        Announcement a = transport.announce(remote, options(rule));
        if (a != null) {
            Announced old = announcements.put(socket, new Announced(a, System.nanoTime()));
            if (old != null) old.announcement().close();
        }
    }

    @Override
    public void connectFailed(Socket socket) {
        withdraw(socket);
    }

    private void withdraw(Socket socket) {
        Announcement a = takeAnnouncement(socket);
        if (a != null) a.close();
    }

    /** The socket's announcement, removed from the table; null when it made none. */
    private Announcement takeAnnouncement(Socket socket) {
        if (announcements.isEmpty()) return null;
        Announced a = announcements.remove(socket);
        return a == null ? null : a.announcement();
    }

    private void sweepAnnouncements() {
        long now = System.nanoTime();
        announcements.entrySet().removeIf(e -> {
            if (now - e.getValue().sinceNanos() < ANNOUNCEMENT_TTL_NANOS) return false;
            e.getValue().announcement().close();
            return true;
        });
    }

    @Override
    public void connected(Socket socket) {
        if (rules.isEmpty() || socket.getClass() != Socket.class || INTERNAL.get() != null) {
            return;
        }
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        Announcement announced = takeAnnouncement(socket);
        Rule rule = rules.matchConnect(remote).orElse(null);
        if (rule == null) {
            if (announced != null) announced.close();
            tcp(socket, Side.CLIENT, "no connect rule matches " + remote, false);
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            if (announced != null) announced.close();
            tcp(socket, Side.CLIENT, rule.provider().keyword() + " unavailable: " + cause(transport) + " (" + where(rule) + ")", true);
            return;
        }
        ConnectionKey key = new ConnectionKey(local, remote);
        PairingResult result = pair(transport, key, rule, socket, false, null, Duration.ZERO, announced);
        record(socket, Side.CLIENT, rule, result);
    }

    // ---------------------------------------------------------------- server side

    @Override
    public void bound(ServerSocket server) {
        if (rules.isEmpty() || server.getClass() != ServerSocket.class || INTERNAL.get() != null
                || !(server.getLocalSocketAddress() instanceof InetSocketAddress bound)) {
            return;
        }
        Listeners l = listen(bound, false);
        if (l != null) {
            servers.put(server, l);
        }
    }

    /**
     * Hot attach, before the bridge is installed: starts listeners for the server sockets this process
     * has bound already where an accept rule may match, and remembers the connections that exist now,
     * which stay on TCP.
     */
    void adopt(ProcessSockets now) {
        if (rules.isEmpty()) {
            return;
        }
        for (InetSocketAddress bound : now.listening()) {
            Listeners l = listen(bound, true);
            if (l != null) {
                adopted.put(bound.getPort(), l);
            }
        }
        for (ProcessSockets.Connection c : now.established()) {
            if (adopted.containsKey(c.local().getPort())) {
                preexisting.add(new ConnectionKey(c.remote(), c.local()));
            }
        }
    }

    private Listeners listen(InetSocketAddress bound, boolean adopt) {
        Map<Provider, ServerBinding> bindings = new EnumMap<>(Provider.class);
        for (Map.Entry<Provider, Transport> e : transports.entrySet()) {
            if (!acceptRuleMayMatch(e.getKey(), bound)) continue;
            if (e.getKey() == Provider.SHM) PathWarmup.begin(); // a shm client may come: warm up now
            if (!e.getValue().availability().isAvailable()) continue;
            try {
                bindings.put(e.getKey(), e.getValue().listen(bound, policyFor(e.getKey(), adopt)));
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, e.getKey().keyword(), null, "bound=" + bound + (adopt ? " (bound before attach)" : ""));
                }
            } catch (IOException | RuntimeException ex) {
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, "tcp", e.getKey().keyword() + " listener failed: " + ex.getMessage(), "bound=" + bound);
                }
            }
        }
        if (bindings.isEmpty() && !anyAcceptRuleMayMatch(bound)) {
            return null;
        }
        // kept even with no listener (transport unavailable, listener failed), so that accept()
        // records each connection's TCP decision with its reason
        return new Listeners(bound, bindings, adopt);
    }

    private boolean anyAcceptRuleMayMatch(InetSocketAddress bound) {
        for (Provider p : Provider.values()) {
            if (acceptRuleMayMatch(p, bound)) {
                return true;
            }
        }
        return false;
    }

    private boolean acceptRuleMayMatch(Provider provider, InetSocketAddress bound) {
        for (Rule r : rules.rules()) {
            if (r.kind() == RuleKind.ACCEPT && r.provider() == provider && r.matchesPort(bound.getPort())
                    && (bound.getAddress().isAnyLocalAddress() || r.matchesAddress(bound.getAddress()))) {
                return true;
            }
        }
        return false;
    }

    /** Decided on the listener's thread when a pairing request arrives, maybe before accept(). */
    private AcceptPolicy policyFor(Provider provider, boolean gated) {
        return key -> {
            Rule rule = rules.matchAccept(key.server()).orElse(null);
            if (rule == null) {
                return new AcceptPolicy.Refuse("no accept rule matches " + key.server());
            }
            if (rule.provider() != provider) {
                return new AcceptPolicy.Refuse("accept rule is for " + rule.provider().keyword() + " (" + where(rule) + ")");
            }
            if (!rule.allowsClient(key.client().getAddress())) {
                return new AcceptPolicy.Refuse("client " + key.client().getAddress().getHostAddress()
                        + " not in the accept rule's client list (" + where(rule) + ")");
            }
            if (gated && !awaitConfirmed(key, rule.options().fallbackWait())) {
                return new AcceptPolicy.Refuse("no java.net.ServerSocket accepted " + key + " within "
                        + rule.options().fallbackWait().toMillis() + " ms (server socket bound before sora was attached)");
            }
            return new AcceptPolicy.Allow(options(rule));
        };
    }

    private boolean awaitConfirmed(ConnectionKey key, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        synchronized (confirmed) {
            while (!confirmed.contains(key) && !stopped) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    confirmed.wait(Math.max(1, left / 1_000_000L));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return !stopped;
        }
    }

    @Override
    public void accepted(ServerSocket server, Socket socket) {
        if (INTERNAL.get() != null) {
            return;
        }
        Listeners l = servers.get(server);
        if (l == null && !adopted.isEmpty() && server.getLocalSocketAddress() instanceof InetSocketAddress bound) {
            l = adoptedFor(bound);
            if (l != null) {
                servers.put(server, l);
            }
        }
        if (l == null || socket.getClass() != Socket.class) {
            return;
        }
        if (l.adopted()) {
            decided.put(socket, Boolean.TRUE);
        }
        serverSide(socket, l);
    }

    /** The path of an accepted socket (from accept(), or first seen in getInputStream/getOutputStream). */
    private void serverSide(Socket socket, Listeners l) {
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        ConnectionKey key = new ConnectionKey(remote, local);
        Rule rule = rules.matchAccept(local).orElse(null);
        if (rule == null) {
            tcp(socket, Side.SERVER, "no accept rule matches " + local, false);
            return;
        }
        if (!rule.allowsClient(remote.getAddress())) {
            tcp(socket, Side.SERVER, "client " + remote.getAddress().getHostAddress() + " not in the accept rule's client list (" + where(rule) + ")", true);
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            tcp(socket, Side.SERVER, rule.provider().keyword() + " unavailable: " + cause(transport) + " (" + where(rule) + ")", true);
            return;
        }
        ServerBinding binding = l.bindings().get(rule.provider());
        if (l.adopted()) {
            synchronized (confirmed) {
                confirmed.add(key);
                confirmed.notifyAll();
            }
        }
        try {
            record(socket, Side.SERVER, rule, pair(transport, key, rule, socket, true, binding, rule.options().fallbackWait(), null));
        } finally {
            if (l.adopted()) {
                confirmed.remove(key);
            }
        }
    }

    private Listeners adoptedFor(InetSocketAddress local) {
        Listeners l = adopted.get(local.getPort());
        if (l == null) {
            return null;
        }
        return l.bound().getAddress().isAnyLocalAddress() || l.bound().getAddress().equals(local.getAddress()) ? l : null;
    }

    /**
     * A socket returned by an accept() that was already running when the agent was attached: decided
     * the first time the application asks for one of its streams, before any byte moved.
     */
    private PairedSocket lateAccepted(Socket socket) {
        if (adopted.isEmpty() || socket.getClass() != Socket.class || decided.containsKey(socket)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)
                || !(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)) {
            return null;
        }
        Listeners l = adoptedFor(local);
        if (l == null) {
            return null;
        }
        if (decided.putIfAbsent(socket, Boolean.TRUE) != null) {
            return sockets.get(socket);
        }
        if (preexisting.remove(new ConnectionKey(remote, local))) {
            return null;
        }
        serverSide(socket, l);
        return sockets.get(socket);
    }

    @Override
    public void serverClosed(ServerSocket server) {
        Listeners l = servers.remove(server);
        if (l != null) {
            l.bindings().values().forEach(ServerBinding::close);
            if (l.adopted()) {
                adopted.remove(l.bound().getPort(), l);
            }
        }
    }

    // ---------------------------------------------------------------- streams and lifecycle

    @Override
    public InputStream inputStream(Socket socket, InputStream tcp) {
        PairedSocket p = sockets.get(socket);
        if (p == null) {
            p = lateAccepted(socket);
        }
        return p == null ? tcp : p.in(socket);
    }

    @Override
    public OutputStream outputStream(Socket socket, OutputStream tcp) {
        PairedSocket p = sockets.get(socket);
        if (p == null) {
            p = lateAccepted(socket);
        }
        return p == null ? tcp : p.out(socket);
    }

    @Override
    public void shutdownInput(Socket socket) {
        PairedSocket p = sockets.get(socket);
        try {
            if (p != null) {
                p.connection().shutdownInput();
            }
        } catch (IOException ignored) {
            // the TCP shutdown succeeded; the fast path is closing anyway
        }
    }

    @Override
    public void shutdownOutput(Socket socket) {
        PairedSocket p = sockets.get(socket);
        try {
            if (p != null) {
                p.connection().shutdownOutput();
            }
        } catch (IOException ignored) {
            // as above
        }
    }

    @Override
    public void closed(Socket socket) {
        withdraw(socket);
        registry.closed(socket);
        PairedSocket p = sockets.remove(socket);
        if (p != null) {
            p.cleanable.clean();
        }
    }

    static void close(FastConnection c, Tracer tracer) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is best effort; the peer sees the control channel close
        }
        if (tracer.isOn(Category.NET)) {
            tracer.event(Hook.CONN_CLOSE, c.id(), c.path(), null, "sent=" + c.bytesSent() + " received=" + c.bytesReceived());
        }
    }

    @Override
    public void methodTrace(int mtId, boolean exit, Object self, Throwable thrown) {
        if (INTERNAL.get() != null) {
            return; // the agent's own sockets (warm-up) are not the application's calls
        }
        MethodTrace.emit(tracer, mtId, exit, self, thrown);
    }

    @Override
    public String pathOf(Socket socket) {
        PairedSocket p = sockets.get(socket);
        return p == null ? "tcp" : p.connection().path();
    }

    /**
     * Stops every pairing listener (their rendezvous files go with them). Called at detach and from the
     * JVM's shutdown hook: a JVM that exits without closing its server sockets leaves nothing behind.
     */
    void closeListeners() {
        List<Listeners> all;
        synchronized (servers) {
            all = new ArrayList<>(servers.values());
            servers.clear();
        }
        all.addAll(adopted.values());
        adopted.clear();
        for (Listeners l : all) {
            l.bindings().values().forEach(ServerBinding::close);
        }
    }

    /**
     * Detach, after the bridge delegate was removed: stops every listener (new clients fall back to TCP
     * at once) and hands the paired connections to a watcher thread that closes each fast path when the
     * application closes its socket (the close advice is gone by then), so the peer still sees the end
     * (or drops it: the watcher sees a collected socket too), and ends the cleaner's thread.
     * {@code whenDone} runs once no paired connection is left.
     */
    void stop(Runnable whenDone) {
        stopped = true;
        announcements.values().forEach(a -> a.announcement().close());
        announcements.clear();
        synchronized (confirmed) {
            confirmed.notifyAll();
        }
        closeListeners();
        DetachedConnections<PairedSocket> left = new DetachedConnections<>();
        synchronized (sockets) {
            sockets.forEach(left::add);
            sockets.clear();
        }
        cleaner.close();
        left.start(p -> p.cleanable.clean(), whenDone);
    }

    // ---------------------------------------------------------------- helpers

    /** Server side: waits at most {@code wait} on {@code binding} (null: no listener); client side ignores both. */
    private PairingResult pair(Transport transport, ConnectionKey key, Rule rule, Socket socket, boolean server,
                               ServerBinding binding, Duration wait, Announcement announced) {
        if (tracer.isOn(Category.NET)) {
            tracer.entry(Hook.PAIR_ENTRY, 0, (server ? "accept " : "connect ") + key + " rule=" + where(rule));
        }
        PairingResult result;
        try {
            SocketHooks hooks = PairedSocket.hooks(socket);
            if (server) {
                result = binding == null
                        ? new PairingResult.Fallback(rule.provider().keyword() + " listener not running for " + key.server())
                        : binding.awaitPairing(key, wait, hooks);
            } else {
                result = transport.connect(key, options(rule), hooks, announced);
            }
        } catch (RuntimeException e) {
            result = new PairingResult.Fallback("pairing failed: " + e);
        }
        if (server && result instanceof PairingResult.Paired) {
            // the application's first bytes should not meet a cold data path (see PathWarmup); a
            // client waited already, in connecting(), before it announced itself
            PathWarmup.awaitDataPath();
        }
        if (tracer.isOn(Category.NET)) {
            long id = result instanceof PairingResult.Paired p ? p.connection().id() : 0;
            tracer.exit(Hook.PAIR_EXIT, id, result instanceof PairingResult.Paired ? 0 : -1, null);
        }
        return result;
    }

    private void record(Socket socket, Side side, Rule rule, PairingResult result) {
        if (result instanceof PairingResult.Paired p) {
            FastConnection c = p.connection();
            sockets.put(socket, PairedSocket.register(socket, c, rule, tracer, cleaner));
            String reason = "paired (" + where(rule) + ")";
            registry.add(socket, c.id(), side, c.path(), reason, c);
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.PATH, c.id(), c.path(), reason,
                        "local=" + socket.getLocalSocketAddress() + " remote=" + socket.getRemoteSocketAddress());
            }
        } else if (result instanceof PairingResult.Fallback f) {
            tcp(socket, side, f.reason(), true);
        }
    }

    /**
     * A connection left on TCP. {@code matched}: a rule named it (it is registered for the status view);
     * connections no rule names are only traced, and get an id only then.
     */
    private void tcp(Socket socket, Side side, String reason, boolean matched) {
        boolean traced = tracer.isOn(Category.NET);
        if (!matched && !traced) {
            return;
        }
        long id = ConnectionIds.next();
        if (matched) {
            registry.add(socket, id, side, "tcp", reason, null);
        }
        if (traced) {
            tracer.event(Hook.PATH, id, "tcp", reason,
                    "local=" + socket.getLocalSocketAddress() + " remote=" + socket.getRemoteSocketAddress());
        }
    }

    static PairingOptions options(Rule rule) {
        return new PairingOptions(rule.options().sendBufferSize(), rule.options().receiveBufferSize(),
                rule.options().fallbackWait());
    }

    private static String where(Rule rule) {
        return rule.source() + ":" + rule.line();
    }

    private static String cause(Transport t) {
        if (t == null) {
            return "transport not built in";
        }
        return t.availability().unavailabilityCause().map(Throwable::getMessage).orElse("unknown");
    }
}
