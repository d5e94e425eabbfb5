package io.sora.agent;

import io.sora.agent.bootstrap.SoraDelegate;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleKind;
import io.sora.rules.RuleSet;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Decides, per connection, which path carries its bytes, and keeps the per-socket state that
 * retransformation cannot add as fields: a weak identity side table (neither Socket nor ServerSocket
 * overrides equals/hashCode, so a WeakHashMap is an identity map for them).
 *
 * <p>Only sockets of exactly {@code java.net.Socket} / {@code java.net.ServerSocket} are paired:
 * subclasses (SSL sockets above all) may override the streams, and a paired connection whose bytes
 * the subclass sends over TCP anyway would lose data.
 */
final class ConnectionManager implements SoraDelegate {
    private final RuleSet rules;
    private final Map<Provider, Transport> transports;
    private final Tracer tracer;
    private final AtomicLong tcpIds = new AtomicLong();
    private final Map<Socket, Paired> sockets = Collections.synchronizedMap(new WeakHashMap<>());
    private final Map<ServerSocket, List<ServerBinding>> servers = Collections.synchronizedMap(new WeakHashMap<>());

    ConnectionManager(RuleSet rules, Map<Provider, Transport> transports, Tracer tracer) {
        this.rules = rules;
        this.transports = transports;
        this.tracer = tracer;
    }

    /** A socket whose bytes move on a fast path. */
    record Paired(FastConnection connection, Rule rule) {}

    // ---------------------------------------------------------------- client side

    @Override
    public void connected(Socket socket) {
        if (rules.isEmpty() || socket.getClass() != Socket.class) {
            return;
        }
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        Rule rule = rules.matchConnect(remote).orElse(null);
        if (rule == null) {
            tcp(local, remote, "no connect rule matches " + remote);
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            tcp(local, remote, rule.provider().keyword() + " unavailable: " + cause(transport) + " (" + where(rule) + ")");
            return;
        }
        ConnectionKey key = new ConnectionKey(local, remote);
        PairingResult result = pair(transport, key, rule, socket, false);
        record(socket, key, rule, result);
    }

    // ---------------------------------------------------------------- server side

    @Override
    public void bound(ServerSocket server) {
        if (rules.isEmpty() || server.getClass() != ServerSocket.class
                || !(server.getLocalSocketAddress() instanceof InetSocketAddress bound)) {
            return;
        }
        List<ServerBinding> bindings = new ArrayList<>();
        for (Map.Entry<Provider, Transport> e : transports.entrySet()) {
            if (!acceptRuleMayMatch(e.getKey(), bound) || !e.getValue().availability().isAvailable()) {
                continue;
            }
            try {
                bindings.add(e.getValue().listen(bound, policyFor(e.getKey())));
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, e.getKey().keyword(), null, "bound=" + bound);
                }
            } catch (IOException | RuntimeException ex) {
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, "tcp", e.getKey().keyword() + " listener failed: " + ex.getMessage(), "bound=" + bound);
                }
            }
        }
        if (!bindings.isEmpty()) {
            servers.put(server, bindings);
        }
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
    private AcceptPolicy policyFor(Provider provider) {
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
            return new AcceptPolicy.Allow(options(rule));
        };
    }

    @Override
    public void accepted(ServerSocket server, Socket socket) {
        List<ServerBinding> bindings = servers.get(server);
        if (bindings == null || socket.getClass() != Socket.class
                || !(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        ConnectionKey key = new ConnectionKey(remote, local);
        Rule rule = rules.matchAccept(local).orElse(null);
        if (rule == null) {
            tcp(local, remote, "no accept rule matches " + local);
            return;
        }
        if (!rule.allowsClient(remote.getAddress())) {
            tcp(local, remote, "client " + remote.getAddress().getHostAddress() + " not in the accept rule's client list (" + where(rule) + ")");
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            tcp(local, remote, rule.provider().keyword() + " unavailable: " + cause(transport) + " (" + where(rule) + ")");
            return;
        }
        ServerBinding binding = null;
        for (ServerBinding b : bindings) {
            if (b != null) {
                binding = b;
            }
        }
        PairingResult result = pair(transport, key, rule, socket, true, binding);
        record(socket, key, rule, result);
    }

    @Override
    public void serverClosed(ServerSocket server) {
        List<ServerBinding> bindings = servers.remove(server);
        if (bindings != null) {
            bindings.forEach(ServerBinding::close);
        }
    }

    // ---------------------------------------------------------------- streams and lifecycle

    @Override
    public InputStream inputStream(Socket socket, InputStream tcp) {
        Paired p = sockets.get(socket);
        return p == null ? tcp : p.connection().inputStream();
    }

    @Override
    public OutputStream outputStream(Socket socket, OutputStream tcp) {
        Paired p = sockets.get(socket);
        return p == null ? tcp : p.connection().outputStream();
    }

    @Override
    public void shutdownInput(Socket socket) {
        Paired p = sockets.get(socket);
        if (p != null) {
            try {
                p.connection().shutdownInput();
            } catch (IOException ignored) {
                // the TCP shutdown succeeded; the fast path is closing anyway
            }
        }
    }

    @Override
    public void shutdownOutput(Socket socket) {
        Paired p = sockets.get(socket);
        if (p != null) {
            try {
                p.connection().shutdownOutput();
            } catch (IOException ignored) {
                // as above
            }
        }
    }

    @Override
    public void closed(Socket socket) {
        Paired p = sockets.remove(socket);
        if (p != null) {
            FastConnection c = p.connection();
            try {
                c.close();
            } catch (IOException ignored) {
                // closing is best effort; the peer sees the control channel close
            }
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.CONN_CLOSE, c.id(), c.path(), null, "sent=" + c.bytesSent() + " received=" + c.bytesReceived());
            }
        }
    }

    @Override
    public void methodTrace(int mtId, boolean exit, Object self, Throwable thrown) {
        MethodTrace.emit(tracer, mtId, exit, self, thrown);
    }

    @Override
    public String pathOf(Socket socket) {
        Paired p = sockets.get(socket);
        return p == null ? "tcp" : p.connection().path();
    }

    /** Paired connections, for status views and tests. */
    List<FastConnection> connections() {
        synchronized (sockets) {
            List<FastConnection> out = new ArrayList<>();
            sockets.values().forEach(p -> out.add(p.connection()));
            return out;
        }
    }

    // ---------------------------------------------------------------- helpers

    private PairingResult pair(Transport transport, ConnectionKey key, Rule rule, Socket socket, boolean server) {
        return pair(transport, key, rule, socket, server, null);
    }

    private PairingResult pair(Transport transport, ConnectionKey key, Rule rule, Socket socket, boolean server,
                               ServerBinding binding) {
        if (tracer.isOn(Category.NET)) {
            tracer.entry(Hook.PAIR_ENTRY, 0, (server ? "accept " : "connect ") + key + " rule=" + where(rule));
        }
        PairingResult result;
        try {
            SocketHooks hooks = hooks(socket);
            if (server) {
                result = binding == null
                        ? new PairingResult.Fallback(rule.provider().keyword() + " listener not running for " + key.server())
                        : binding.awaitPairing(key, rule.options().fallbackWait(), hooks);
            } else {
                result = transport.connect(key, options(rule), hooks);
            }
        } catch (RuntimeException e) {
            result = new PairingResult.Fallback("pairing failed: " + e);
        }
        if (tracer.isOn(Category.NET)) {
            long id = result instanceof PairingResult.Paired p ? p.connection().id() : 0;
            tracer.exit(Hook.PAIR_EXIT, id, result instanceof PairingResult.Paired ? 0 : -1, null);
        }
        return result;
    }

    private void record(Socket socket, ConnectionKey key, Rule rule, PairingResult result) {
        if (result instanceof PairingResult.Paired p) {
            sockets.put(socket, new Paired(p.connection(), rule));
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.PATH, p.connection().id(), p.connection().path(), "paired (" + where(rule) + ")",
                        "local=" + socket.getLocalSocketAddress() + " remote=" + socket.getRemoteSocketAddress());
            }
        } else if (result instanceof PairingResult.Fallback f) {
            tcp((InetSocketAddress) socket.getLocalSocketAddress(), (InetSocketAddress) socket.getRemoteSocketAddress(), f.reason());
        }
    }

    private void tcp(InetSocketAddress local, InetSocketAddress remote, String reason) {
        if (tracer.isOn(Category.NET)) {
            tracer.event(Hook.PATH, -tcpIds.incrementAndGet(), "tcp", reason, "local=" + local + " remote=" + remote);
        }
    }

    private static SocketHooks hooks(Socket socket) {
        return new SocketHooks() {
            @Override
            public int soTimeoutMillis() throws IOException {
                return socket.getSoTimeout();
            }

            @Override
            public void closeSocket() throws IOException {
                socket.close();
            }
        };
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
