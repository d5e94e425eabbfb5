package io.sora.agent;

import io.sora.agent.status.ProcessSockets;
import io.sora.agent.status.WeakIdentityMap;
import io.sora.rules.RuleSet;
import io.sora.transport.ConnectionKey;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hot attach: server sockets bound, and connections made, before the agent arrived. Such server
 * sockets never pass through the bind advice, so {@link #adopt} finds them in {@code /proc} and starts
 * their listeners. An adopted listener answers a pairing request only once an accept of this process
 * really took that connection ({@link #accepted(ConnectionKey, Duration)}; a {@code java.net.ServerSocket}'s,
 * or a {@code ServerSocketChannel}'s where the channel patch is installed): a pairing nobody claims would
 * swallow the client's bytes. A connection returned by an {@code accept()} that was already running
 * when the agent arrived is decided when the application first asks for its streams
 * ({@link #lateAccepted}); connections that existed at the attach stay on TCP, untouched.
 */
final class HotAttach {
    private final RuleSet rules;
    private final Listeners listeners;
    /** Listeners of server sockets bound before the attach, by port. Empty unless attached. */
    private final Map<Integer, Listeners.Server> adopted = new ConcurrentHashMap<>();
    /** Connections that existed when the agent was attached: they stay on TCP, untouched. */
    private final Set<ConnectionKey> preexisting = ConcurrentHashMap.newKeySet();
    /** Connections a java.net.ServerSocket accepted, awaited by the policy of adopted listeners. */
    private final Set<ConnectionKey> confirmed = ConcurrentHashMap.newKeySet();
    /** Accepted sockets of adopted servers whose path is decided already. */
    private final WeakIdentityMap<Socket, Boolean> decided = new WeakIdentityMap<>();
    private volatile boolean stopped;

    HotAttach(RuleSet rules, Listeners listeners) {
        this.rules = rules;
        this.listeners = listeners;
    }

    /**
     * Before the bridge is installed: starts listeners for the server sockets this process has bound
     * already where an accept rule may match, and remembers the connections that exist now.
     */
    void adopt(ProcessSockets now) {
        if (rules.isEmpty()) {
            return;
        }
        for (InetSocketAddress bound : now.listening()) {
            Listeners.Server l = listeners.listen(bound, this::accepted);
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

    /** Whether anything was adopted: if not, nothing here applies. */
    boolean active() {
        return !adopted.isEmpty();
    }

    /** The adopted listeners of a server socket seen for the first time at its accept, now its own; or null. */
    Listeners.Server serverOf(ServerSocket server) {
        if (adopted.isEmpty() || !(server.getLocalSocketAddress() instanceof InetSocketAddress bound)) {
            return null;
        }
        Listeners.Server l = adoptedFor(bound);
        if (l != null) {
            listeners.attach(server, l);
        }
        return l;
    }

    /**
     * The adopted listeners of a server socket channel bound before the attach, seen at its first accept
     * since (the channel patch, installed by the attach, reports a channel's accepts as it does a server
     * socket's), now its own; or null. Its connections are then decided as those of a channel bound
     * after the attach: at the accept, the listener answering a request only once that accept confirmed it.
     */
    Listeners.Server serverOf(java.nio.channels.ServerSocketChannel server) {
        if (adopted.isEmpty()) return null;
        java.net.SocketAddress local;
        try {
            local = server.getLocalAddress();
        } catch (java.io.IOException e) {
            return null; // closed meanwhile
        }
        if (!(local instanceof InetSocketAddress bound)) return null;
        Listeners.Server l = adoptedFor(bound);
        if (l != null) {
            listeners.attach(server, l);
        }
        return l;
    }

    /** An adopted server's accept() returned {@code socket}: its path is decided now, not at its first stream. */
    void deciding(Socket socket) {
        decided.put(socket, Boolean.TRUE);
    }

    /**
     * A socket first seen in getInputStream/getOutputStream: when it comes from an accept() of an adopted
     * server that began before the attach, and did not exist at the attach, the listeners to decide
     * its path with (once: null on later calls, and for any other socket).
     */
    Listeners.Server lateAccepted(Socket socket) {
        if (adopted.isEmpty() || !ServedSockets.socket(socket.getClass()) || decided.containsKey(socket)
                || !(socket.getLocalSocketAddress() instanceof InetSocketAddress local)
                || !(socket.getRemoteSocketAddress() instanceof InetSocketAddress remote)) {
            return null;
        }
        Listeners.Server l = adoptedFor(local);
        if (l == null || decided.putIfAbsent(socket, Boolean.TRUE) != null) {
            return null;
        }
        return preexisting.remove(new ConnectionKey(remote, local)) ? null : l;
    }

    /** The accepting thread is about to claim {@code key}'s pairing: an adopted listener may answer it. */
    void confirm(ConnectionKey key) {
        synchronized (confirmed) {
            confirmed.add(key);
            confirmed.notifyAll();
        }
    }

    /** The accept decided {@code key}: no later request is confirmed by it. */
    void unconfirm(ConnectionKey key) {
        confirmed.remove(key);
    }

    /** An adopted listener's policy (listener thread): waits at most {@code wait} for {@link #confirm}. */
    private boolean accepted(ConnectionKey key, Duration wait) {
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

    /** An adopted server socket closed: its port is no longer adopted. */
    private void closed(Listeners.Server l) {
        if (l.adopted()) {
            adopted.remove(l.bound().getPort(), l);
        }
    }

    /**
     * A server socket (or server socket channel) closed: {@code l} its listeners, or null when none is its
     * own (no accept since the attach claimed adopted ones); {@code bound}, asked only then, its address.
     */
    void serverClosed(Listeners.Server l, java.util.function.Supplier<java.net.SocketAddress> bound) {
        if (l != null) {
            closed(l);
        } else if (active()) {
            closedUnclaimed(bound.get());
        }
    }

    /**
     * A server socket (or server socket channel) closed that no accept since the attach had claimed,
     * bound at {@code bound}: the listener adopted for it stops with it. Left running, it kept its thread
     * and rendezvous socket until the detach, and a server socket bound next on that port could not start
     * its own beside it: all of that one's clients stayed on TCP (found in review, 2026-11-29).
     */
    private void closedUnclaimed(java.net.SocketAddress bound) {
        if (!(bound instanceof InetSocketAddress local)) return;
        Listeners.Server l = adopted.get(local.getPort());
        if (l == null || !sameAddress(l.bound(), local)) return;
        if (adopted.remove(local.getPort(), l)) l.close();
    }

    /** Whether two bound addresses are the same, either wildcard (IPv4 or IPv6) counting as the other. */
    private static boolean sameAddress(InetSocketAddress a, InetSocketAddress b) {
        return a.getAddress().isAnyLocalAddress() ? b.getAddress().isAnyLocalAddress() : a.getAddress().equals(b.getAddress());
    }

    /** Every adopted listener stops (detach, JVM exit). */
    void closeAll() {
        for (Listeners.Server l : adopted.values()) {
            if (adopted.remove(l.bound().getPort(), l)) l.close();
        }
    }

    /** Detach: waiting policies give up at once. */
    void stop() {
        stopped = true;
        synchronized (confirmed) {
            confirmed.notifyAll();
        }
    }

    private Listeners.Server adoptedFor(InetSocketAddress local) {
        Listeners.Server l = adopted.get(local.getPort());
        if (l == null) {
            return null;
        }
        return l.bound().getAddress().isAnyLocalAddress() || l.bound().getAddress().equals(local.getAddress()) ? l : null;
    }
}
