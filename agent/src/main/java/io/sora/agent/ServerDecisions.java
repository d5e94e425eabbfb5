package io.sora.agent;

import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleSet;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.Transport;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;

/**
 * Where an accepted connection's path is decided: the accept rule of its local address, the rule's
 * client list, the transport, then its server socket's listener claims the pairing
 * ({@link ServerBinding#awaitPairing}), and {@link PathRecorder} records the outcome. Runs on the
 * application's accepting thread, right after {@code accept()} (or, after a hot attach, at the
 * socket's first stream: {@link HotAttach}).
 */
final class ServerDecisions {
    private final RuleSet rules;
    private final Map<Provider, Transport> transports;
    private final PathRecorder recorder;
    private final HotAttach hotAttach;

    ServerDecisions(RuleSet rules, Map<Provider, Transport> transports, PathRecorder recorder, HotAttach hotAttach) {
        this.rules = rules;
        this.transports = transports;
        this.recorder = recorder;
        this.hotAttach = hotAttach;
    }

    /** Decides the path of {@code socket}, accepted by a server socket whose listeners are {@code server}. */
    void decide(Socket socket, Listeners.Server server) {
        decide(socket, server, null);
    }

    /**
     * As {@link #decide(Socket, Listeners.Server)}, for a socket an {@code accept()} begun before a hot attach
     * returned, decided at its first stream: possibly long after its accept, so the transport is not told
     * that its connection was accepted just now ({@link ServerBinding#awaitAccepted}).
     */
    void decideLate(Socket socket, Listeners.Server server) {
        decide(socket, server, null, false);
    }

    /**
     * As {@link #decide(Socket, Listeners.Server)}; {@code maxWait} (null: the rule's wait): the longest
     * the accepting thread waits for its part of the pairing, the rule's wait when shorter (a
     * non-blocking accept, docs/nio.md). A connection whose client announced nothing is TCP at once
     * either way; one whose request comes later is TCP on both ends (the late request is refused).
     */
    void decide(Socket socket, Listeners.Server server, java.time.Duration maxWait) {
        decide(socket, server, maxWait, true);
    }

    private void decide(Socket socket, Listeners.Server server, java.time.Duration maxWait, boolean justAccepted) {
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        ConnectionKey key = new ConnectionKey(remote, local);
        Rule rule = rules.matchAccept(local).orElse(null);
        if (rule == null) {
            recorder.tcp(socket, Side.SERVER, "no accept rule matches " + local, false);
            return;
        }
        if (!rule.allowsClient(remote.getAddress())) {
            recorder.tcp(socket, Side.SERVER, "client " + remote.getAddress().getHostAddress()
                    + " not in the accept rule's client list (" + RuleTerms.where(rule) + ")", true);
            return;
        }
        Transport transport = transports.get(rule.provider());
        if (transport == null || !transport.availability().isAvailable()) {
            recorder.tcp(socket, Side.SERVER, rule.provider().keyword() + " unavailable: " + RuleTerms.cause(transport)
                    + " (" + RuleTerms.where(rule) + ")", true);
            return;
        }
        ServerBinding binding = server.bindings().get(rule.provider());
        if (server.adopted()) {
            hotAttach.confirm(key);
        }
        try {
            recorder.pairing(Side.SERVER, key, rule);
            PairingResult result;
            try {
                result = attempt(server, binding, key, rule, socket, maxWait, justAccepted);
            } catch (RuntimeException e) {
                result = PathRecorder.failed(e);
            }
            result = recorder.paired(result);
            recorder.record(socket, Side.SERVER, key, rule, result);
            if (result instanceof PairingResult.Paired) {
                // the application's first bytes should not meet a cold data path (see PathWarmup); a client
                // waited already, before it announced itself. Waited for only once the connection is recorded:
                // the client's connect has returned, and status must list what both ends see as open
                PathWarmup.awaitDataPath();
            }
        } finally {
            if (server.adopted()) {
                hotAttach.unconfirm(key);
            }
        }
    }

    /** The pairing of an accepted {@code socket} on {@code binding} (null: its listener is not running). */
    private static PairingResult attempt(Listeners.Server server, ServerBinding binding, ConnectionKey key, Rule rule,
                                         Socket socket, java.time.Duration maxWait, boolean justAccepted) {
        if (binding == null) {
            // the listener's own failure, when it had one (the trace's listen event has it too, but
            // a path's reason is what status and verify show)
            String failed = server.failures().get(rule.provider());
            return new PairingResult.Fallback(rule.provider().keyword() + " listener not running for " + key.server()
                    + (failed == null ? "" : ": it failed to start: " + failed));
        }
        PathWarmup.applicationPairing();
        java.time.Duration wait = RuleTerms.capped(rule.options().fallbackWait(), maxWait);
        return justAccepted ? binding.awaitAccepted(key, wait, PairedSocket.hooks(socket))
                : binding.awaitPairing(key, wait, PairedSocket.hooks(socket));
    }
}
