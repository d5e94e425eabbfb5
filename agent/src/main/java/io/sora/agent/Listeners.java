package io.sora.agent;

import io.sora.agent.status.WeakIdentityMap;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleKind;
import io.sora.rules.RuleSet;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.ServerBinding;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * The pairing listeners of bound server sockets: one {@link ServerBinding} per fast path an accept
 * rule may use at the bound address, started when a {@code java.net.ServerSocket} is bound, closed
 * when it closes, at detach and at the JVM's exit. The accept policy their pairing requests are
 * decided by, on the listener's thread and possibly before {@code accept()}, is here too.
 */
final class Listeners {
    /**
     * The fast-path listeners of one server socket (possibly none: a transport unavailable, a listener
     * failed), kept so that accept() records each connection's TCP decision with its reason;
     * {@code failures}: why a transport's listener could not start, for those reasons; {@code adopted}
     * when bound before a hot attach.
     */
    record Server(InetSocketAddress bound, Map<Provider, ServerBinding> bindings, Map<Provider, String> failures,
                  boolean adopted) {
        void close() {
            bindings.values().forEach(ServerBinding::close);
        }
    }

    /** Before a hot attach nothing confirms an accept: an adopted listener's policy waits for {@code accept()} (see {@link HotAttach}). */
    @FunctionalInterface
    interface AcceptGate {
        /** Whether a {@code java.net.ServerSocket} accepted {@code key} within {@code wait}. */
        boolean accepted(ConnectionKey key, Duration wait);
    }

    private final RuleSet rules;
    private final Map<Provider, Transport> transports;
    private final Tracer tracer;
    /** By {@code ServerSocket} or {@code ServerSocketChannel}. */
    private final WeakIdentityMap<Object, Server> servers = new WeakIdentityMap<>();
    /** Set by the detach's {@link #closeAll}: a server socket bound later gets no listener. */
    private volatile boolean stopped;

    Listeners(RuleSet rules, Map<Provider, Transport> transports, Tracer tracer) {
        this.rules = rules;
        this.transports = transports;
        this.tracer = tracer;
    }

    /** A server socket was bound: its listeners start where an accept rule may match. */
    void bound(ServerSocket server) {
        if (rules.isEmpty() || !(server.getLocalSocketAddress() instanceof InetSocketAddress bound)) {
            return;
        }
        if (!ServedSockets.serverSocket(server.getClass())) {
            notServed(server, bound);
            return;
        }
        remember(server, listen(bound, null, reusesPort(server)));
    }

    /**
     * Told of a server socket subclass bound where an accept rule may match (the agent's {@code UnservedApis}:
     * said once per class, with the fix); nothing until the agent sets it.
     */
    volatile java.util.function.BiConsumer<Class<?>, Boolean> notServed = (type, server) -> { };

    /**
     * A server socket of a subclass of {@code ServerSocket} (an {@code SSLServerSocket} above all, whose
     * {@code accept} is its own) bound where an accept rule may match: it gets no listener, so its clients stay
     * on TCP; traced as a listener that is TCP, with why, and said once per class (until 2026-11-29: silently).
     */
    private void notServed(ServerSocket server, InetSocketAddress bound) {
        if (!anyAcceptRuleMayMatch(bound)) return;
        if (tracer.isOn(Category.NET)) {
            tracer.event(Hook.LISTEN, 0, "tcp", io.sora.agent.instrumentation.UnservedApis.notServedReason(server.getClass(), true),
                    "bound=" + bound);
        }
        notServed.accept(server.getClass(), true);
    }

    /**
     * Whether the server socket (or channel) was bound with {@code SO_REUSEPORT}: then other processes may
     * listen on its port too, each getting some of its connections, and the one shm listener of the port
     * (its rendezvous is named by port) would pair their clients too, with connections its accepts never
     * see: those clients hung (found in review, 2026-11-29). Such a server stays on TCP for shm.
     */
    private static boolean reusesPort(Object server) {
        try {
            Boolean on = server instanceof ServerSocket ss ? ss.getOption(java.net.StandardSocketOptions.SO_REUSEPORT)
                    : ((java.nio.channels.ServerSocketChannel) server).getOption(java.net.StandardSocketOptions.SO_REUSEPORT);
            return Boolean.TRUE.equals(on);
        } catch (IOException | RuntimeException e) {
            return false; // not supported here: no other process can share the port that way
        }
    }

    /** Keeps {@code l} as {@code server}'s listeners, unless the detach closed them all meanwhile. */
    private void remember(Object server, Server l) {
        if (l == null) return;
        servers.put(server, l);
        if (stopped && servers.remove(server) != null) l.close();
    }

    /** A server socket channel was bound (docs/nio.md): its listeners start as for a server socket. */
    void boundChannel(java.nio.channels.ServerSocketChannel server, InetSocketAddress bound) {
        if (rules.isEmpty()) {
            return;
        }
        remember(server, listen(bound, null, reusesPort(server)));
    }

    /** The listeners of a server socket (or server socket channel), or null. */
    Server of(Object server) {
        return servers.get(server);
    }

    /** Hot attach: the server socket's (or server socket channel's) adopted listeners, found at its first accept. */
    void attach(Object server, Server l) {
        servers.put(server, l);
    }

    /** The server socket closed: its listeners stop. Returns them (null if it had none). */
    Server closed(Object server) {
        Server l = servers.remove(server);
        if (l != null) {
            l.close();
        }
        return l;
    }

    /** Every listener of a bound server socket stops (detach, JVM exit). */
    void closeAll() {
        stopped = true;
        servers.drain((server, l) -> l.close());
    }

    /**
     * Starts the listeners of an address: one per transport an accept rule there may use and that is
     * available. Null when no accept rule may match at all. {@code gate}: non-null for a server socket
     * bound before a hot attach.
     */
    Server listen(InetSocketAddress bound, AcceptGate gate) {
        return listen(bound, gate, false);
    }

    /** As {@link #listen(InetSocketAddress, AcceptGate)}; {@code reusePort}: the server socket has {@code SO_REUSEPORT} (no shm). */
    Server listen(InetSocketAddress bound, AcceptGate gate, boolean reusePort) {
        if (stopped) return null;
        boolean adopt = gate != null;
        Map<Provider, ServerBinding> bindings = new EnumMap<>(Provider.class);
        Map<Provider, String> failures = new EnumMap<>(Provider.class);
        for (Map.Entry<Provider, Transport> e : transports.entrySet()) {
            if (!acceptRuleMayMatch(e.getKey(), bound)) continue;
            if (e.getKey() == Provider.SHM) PathWarmup.begin(); // a shm client may come: warm up now
            if (!e.getValue().availability().isAvailable()) continue;
            if (reusePort && e.getKey() == Provider.SHM) {
                failures.put(e.getKey(), "the server socket has SO_REUSEPORT: other processes may accept on its port,"
                        + " and one shm listener per port cannot tell their connections apart");
                continue;
            }
            try {
                bindings.put(e.getKey(), e.getValue().listen(bound, policy(e.getKey(), gate)));
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, e.getKey().keyword(), null, "bound=" + bound + (adopt ? " (bound before attach)" : ""));
                }
            } catch (IOException | RuntimeException ex) {
                failures.put(e.getKey(), String.valueOf(ex.getMessage()));
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.LISTEN, 0, "tcp", e.getKey().keyword() + " listener failed: " + ex.getMessage(), "bound=" + bound);
                }
            }
        }
        if (bindings.isEmpty() && !anyAcceptRuleMayMatch(bound)) {
            return null;
        }
        return new Server(bound, bindings, failures, adopt);
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
    private AcceptPolicy policy(Provider provider, AcceptGate gate) {
        return key -> {
            Rule rule = rules.matchAccept(key.server()).orElse(null);
            if (rule == null) {
                return new AcceptPolicy.Refuse("no accept rule matches " + key.server());
            }
            if (rule.provider() != provider) {
                return new AcceptPolicy.Refuse("accept rule is for " + rule.provider().keyword() + " (" + RuleTerms.where(rule) + ")");
            }
            if (!rule.allowsClient(key.client().getAddress())) {
                return new AcceptPolicy.Refuse("client " + key.client().getAddress().getHostAddress()
                        + " not in the accept rule's client list (" + RuleTerms.where(rule) + ")");
            }
            String scarce = DescriptorBudget.PROCESS.refusal();
            if (scarce != null) return new AcceptPolicy.Refuse(scarce);
            if (gate != null && !gate.accepted(key, rule.options().fallbackWait())) {
                return new AcceptPolicy.Refuse("no accept of this process took " + key + " within "
                        + rule.options().fallbackWait().toMillis() + " ms (server socket bound before sora was attached)");
            }
            return new AcceptPolicy.Allow(RuleTerms.options(rule));
        };
    }
}
