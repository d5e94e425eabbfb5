package io.sora.agent;

import io.sora.agent.bootstrap.SoraBridge;
import io.sora.agent.bootstrap.SoraDelegate;
import io.sora.agent.status.ConnectionRegistry.Side;
import io.sora.agent.status.WeakIdentityMap;
import io.sora.rules.RuleSet;
import io.sora.transport.RingConnection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.function.Supplier;

/**
 * Where a {@code SocketChannel}'s path is decided and a paired one is served (docs/nio.md). A channel
 * is decided through its adaptor socket ({@code socket()}), so that the socket machinery (decisions,
 * {@link PathRecorder}, the status registry, the trace, the cleaner of channels dropped unclosed)
 * serves channels unchanged; the paired ones are then kept here by channel.
 *
 * <p>What is paired: channels connected, or accepted, in blocking mode, when the JDK's NIO classes
 * could be patched ({@code verify}) and the system selector is the epoll one. Everything else stays
 * TCP, with its reason in the trace when a rule named it.
 */
final class Channels {
    /** {@code -Dsora.nio=false}: no channel is ever paired (sockets are not affected). */
    static final String ENABLED_PROPERTY = "sora.nio";
    /**
     * The longest a non-blocking connect's {@code finishConnect} or a non-blocking accept waits for the
     * other end's part of the pairing (the rule's {@code wait} when shorter):
     * {@code -Dsora.nio.pairingWaitMillis}, 20 ms by default. An event loop must not stall for the
     * rule's wait (100 ms by default, seconds in some rule files); on one host the answer takes a
     * listener hand-off (0.1-0.3 ms here), so a miss means a starved machine, and the connection is then
     * TCP on both ends with the reason traced.
     */
    static final java.time.Duration NON_BLOCKING_WAIT =
            java.time.Duration.ofMillis(Math.max(1, Long.getLong("sora.nio.pairingWaitMillis", 20)));

    private final RuleSet rules;
    private final ClientDecisions client;
    private final ServerDecisions server;
    private final Listeners listeners;
    private final PathRecorder recorder;
    /** Null when channels can be served, else why not (computed at the first decision). */
    private final Supplier<String> unservable;
    private final WeakIdentityMap<SocketChannel, PairedChannel> paired = new WeakIdentityMap<>();
    /** Channels whose non-blocking connect is under way: decided (TCP) when it completes. */
    private final WeakIdentityMap<SocketChannel, Boolean> connecting = new WeakIdentityMap<>();
    private volatile String whyNot;
    private volatile boolean checked;
    /** Detach began: no channel pairs any more, and one paired meanwhile is closed (see {@link #remember}). */
    private volatile boolean stopped;

    /** Readiness of paired keys; set once, right after construction. */
    volatile ChannelSelection selection;

    /** Listeners adopted at a hot attach, for server channels bound before it. */
    private final HotAttach hotAttach;

    /** @param hotAttach the server sockets bound before a hot attach */
    Channels(RuleSet rules, ClientDecisions client, ServerDecisions server, Listeners listeners,
             PathRecorder recorder, Supplier<String> unservable, HotAttach hotAttach) {
        this.hotAttach = hotAttach;
        this.rules = rules;
        this.client = client;
        this.server = server;
        this.listeners = listeners;
        this.recorder = recorder;
        this.unservable = unservable;
    }

    /** Null when channels may be paired here, else the reason (checked once). */
    private String whyNot() {
        if (stopped) return "sora is detaching";
        if (!checked) {
            String w;
            if (!Boolean.parseBoolean(System.getProperty(ENABLED_PROPERTY, "true"))) {
                w = "channel pairing is off (-D" + ENABLED_PROPERTY + "=false)";
            } else if (!SelectorProvider.provider().getClass().getName().equals("sun.nio.ch.EPollSelectorProvider")) {
                w = "selector provider " + SelectorProvider.provider().getClass().getName() + " is not served (docs/nio.md)";
            } else {
                w = unservable.get();
            }
            whyNot = w;
            checked = true;
        }
        return whyNot;
    }

    // ---------------------------------------------------------------- client

    /** Before the TCP connect: remembered (with its blocking mode) until it completes, and announced. */
    void connecting(SocketChannel ch, SocketAddress remote) {
        if (rules.isEmpty() || !(remote instanceof InetSocketAddress)) return;
        // A connect the JDK is about to refuse (closed, connected, or one pending already) neither
        // announces nor replaces the pending one's announcement: an announcement no connect follows
        // made the server's accepts wait for its request, the pairing wait each, until swept (10 s)
        if (!ch.isOpen() || ch.isConnected() || ch.isConnectionPending()) return;
        PathWarmup.channelsInUse();
        boolean blocking = ch.isBlocking();
        connecting.put(ch, blocking);
        if (whyNot() == null) client.announce(ch, remote, blocking ? null : NON_BLOCKING_WAIT);
    }

    /**
     * A connect ({@code done}: it completed) or finishConnect returned. Decided once, when the connect
     * that {@link #connecting} saw completes. A non-blocking one (an event loop's, the JDK's
     * {@code HttpClient}'s) pairs in the {@code finishConnect} (or {@code connect}) that completes it,
     * waiting for the server's answer at most {@link #NON_BLOCKING_WAIT} (docs/nio.md).
     */
    void connected(SocketChannel ch, boolean done) {
        if (rules.isEmpty()) return;
        if (!done) {
            Boolean blocking = connecting.get(ch);
            if (Boolean.TRUE.equals(blocking)) { // a blocking connect that did not complete: the channel closed
                connecting.remove(ch);
                client.withdraw(ch);
            }
            return;
        }
        Boolean blocking = connecting.remove(ch);
        if (blocking == null) return; // finishConnect of a channel decided already, or connected before the agent
        Socket adaptor = ch.socket();
        String why = whyNot();
        if (why != null) {
            client.withdraw(ch);
            tcpIfMatched(adaptor, Side.CLIENT, why);
            return;
        }
        client.decide(ch, adaptor, blocking ? null : NON_BLOCKING_WAIT);
        remember(ch, adaptor);
    }

    /**
     * A TCP channel offers TCP_NODELAY (a socket channel) or SO_REUSEADDR (a server channel); a Unix-domain
     * one (sora's own rendezvous and doorbells) neither. Open, closed, bound or not: a fixed set per kind.
     */
    static boolean isTcp(java.nio.channels.NetworkChannel ch) {
        java.util.Set<java.net.SocketOption<?>> options = ch.supportedOptions();
        return options.contains(java.net.StandardSocketOptions.TCP_NODELAY)
                || options.contains(java.net.StandardSocketOptions.SO_REUSEADDR);
    }

    private void tcpIfMatched(Socket adaptor, Side side, String reason) {
        if (!(adaptor.getRemoteSocketAddress() instanceof InetSocketAddress remote)
                || !(adaptor.getLocalSocketAddress() instanceof InetSocketAddress local)) {
            return;
        }
        boolean matched = side == Side.CLIENT ? rules.matchConnect(remote).isPresent() : rules.matchAccept(local).isPresent();
        recorder.tcp(adaptor, side, reason, matched);
    }

    /** The decision made for the adaptor: a paired one is served by channel from now on. */
    private void remember(SocketChannel ch, Socket adaptor) {
        PairedSocket p = recorder.paired(adaptor);
        if (p == null) return;
        if (!(p.connection() instanceof RingConnection rc)) {
            // every medium's connection is a RingConnection; a future one that is not cannot serve channels
            recorder.closed(adaptor);
            return;
        }
        serve(ch, rc);
        // keys registered before the pairing (Netty registers a channel before it connects)
        ChannelSelection s = selection;
        if (s != null) s.pairedLater(ch);
        // A close that ran while this connect was pairing found nothing to close, and a detach that
        // drained the table meanwhile missed it: either way the channel must not stay paired (its
        // peer would wait on the ring, or its bytes would go to TCP once the classes are restored)
        if (stopped || !ch.isOpen()) {
            PairedChannel late = paired.remove(ch);
            if (late != null) closePaired(ch, late);
        }
    }

    private void closePaired(SocketChannel ch, PairedChannel p) {
        // out of the table already, so the close below will not find it (closing): it is let go here
        letGo(ch, p);
        try {
            ch.close();
        } catch (IOException | RuntimeException e) {
            // closed is what we want; the fast path closed with the adaptor above
        }
    }

    /**
     * The warm-up's own pair ({@link PathWarmup}): served as a paired channel from now on, never decided,
     * recorded or traced. False (nothing done) when channels cannot be paired here.
     */
    boolean warmUpPair(SocketChannel ch, RingConnection rc) {
        if (whyNot() != null) return false;
        serve(ch, rc);
        return true;
    }

    /** From now on {@code ch} reads, writes and selects through {@code rc}'s rings. */
    private void serve(SocketChannel ch, RingConnection rc) {
        paired.put(ch, new PairedChannel(rc));
        SoraBridge.channelsPaired = true;
    }

    /** The warm-up's pair leaves the table (before its rings close). */
    void warmUpUnpair(SocketChannel ch) {
        paired.remove(ch);
    }

    // ---------------------------------------------------------------- server

    void bound(ServerSocketChannel server) {
        if (rules.isEmpty()) return;
        SocketAddress local;
        try {
            local = server.getLocalAddress();
        } catch (IOException e) {
            return; // not bound after all: nothing to listen for
        }
        // The address first: a Unix-domain channel (sora's own rendezvous, bound on the application's
        // thread inside its first ServerSocket.bind) never pairs, and must not pay for the check of the
        // channel patch (reading and patching every class of the plan: 35-50 ms cold, measured in the
        // bind of a plain server with an shm accept rule, which then never used a channel itself).
        if (local instanceof InetSocketAddress bound && whyNot() == null) {
            PathWarmup.channelsInUse();
            listeners.boundChannel(server, bound);
        }
    }

    void accepted(ServerSocketChannel serverChannel, SocketChannel ch) {
        Listeners.Server l = listeners.of(serverChannel);
        // bound before a hot attach: the listener adopted for its port, if a rule may match (HotAttach).
        // The address first, as in bound(): sora's own Unix-domain rendezvous accepts on the listener
        // thread of every JVM with a shm accept rule, and a check of the channel patch there (the plan's
        // classes, FileChannelImpl's retransformation, the selector's internals: 20-40 ms cold) delayed
        // the first client's pairing of a program that never used a channel itself
        if (l == null && isTcp(serverChannel) && whyNot() == null) l = hotAttach.serverOf(serverChannel);
        if (l == null) return; // no accept rule may match: TCP
        Socket adaptor = ch.socket();
        // a non-blocking accept waits at most NON_BLOCKING_WAIT, and only for a client that announced
        // itself (a sora client mid-connect): a plain client's connection is TCP at once
        server.decide(adaptor, l, serverChannel.isBlocking() ? null : NON_BLOCKING_WAIT);
        remember(ch, adaptor);
    }

    void serverClosing(ServerSocketChannel server) {
        hotAttach.serverClosed(listeners.closed(server), () -> {
            // its close has begun (getLocalAddress throws now): the adaptor reads the address it was bound to
            try {
                return server.socket().getLocalSocketAddress();
            } catch (UnsupportedOperationException unixDomain) {
                return null; // a Unix-domain server channel (sora's own rendezvous among them): never adopted
            }
        });
    }

    // ---------------------------------------------------------------- paired channels

    /**
     * Detach: every paired channel is closed (its peer reads what was written, then EOF), since once
     * the JDK's classes are restored its reads and writes would go to the TCP connection.
     */
    /**
     * Detach: no channel pairs from now on, and every paired channel is closed (its peer reads what was
     * written, then EOF). Called before the bridge lets go of the delegate: a paired channel's read or
     * write that found no delegate would go to its TCP connection, which the peer does not read.
     */
    void detach() {
        stopped = true;
        paired.drain(this::closePaired);
    }

    PairedChannel paired(Object channel) {
        return channel instanceof SocketChannel ch ? paired.get(ch) : null;
    }

    /**
     * The channel's close begins (the JDK's channel is no longer open; its own state says so only later).
     * A paired channel stays in the table: a read or write that comes now must fail on it
     * ({@code ClosedChannelException}), not go through the JDK's body to the TCP connection, whose bytes
     * the peer never reads (its write would have counted them as sent). It leaves with the channel
     * object; its rings' pages are freed at the close (a closed one holds its 4 KiB header).
     */
    void closing(SocketChannel ch) {
        connecting.remove(ch);
        client.withdraw(ch);
        PairedChannel p = paired.get(ch);
        if (p == null) return;
        // its descriptor is still open: a linger of 0 (the channel's own option is unreadable now) resets
        if (io.sora.transport.NativeSockets.lingersZero(io.sora.transport.NativeSockets.fdOfClosing(ch))) p.connection.resetOnClose();
        letGo(ch, p);
    }

    /**
     * A paired channel's close: every selector lets go of the connection before its medium closes, which may
     * then keep its control channel and segment for the next connection (ChannelSelection.release); then the
     * close is recorded, which closes the medium.
     */
    private void letGo(SocketChannel ch, PairedChannel p) {
        ChannelSelection s = selection;
        if (s != null) s.release(p);
        recorder.closed(ch.socket());
    }

    void shutdown(SocketChannel ch, boolean input) {
        PairedChannel p = paired.get(ch);
        if (p == null) return;
        try {
            if (input) p.connection.shutdownInput(); else p.connection.shutdownOutput();
        } catch (IOException ignored) {
            // the TCP shutdown succeeded; the fast path is closing anyway
        }
        // the key is ready now (at EOF, or writable to fail), as TCP's poll reports a shutdown socket:
        // a selector blocked on it meanwhile wakes (the ring's state changed on this side, no peer rings)
        p.wakeArmedSelector();
    }

    String pathOf(SocketChannel ch) {
        PairedChannel p = paired.get(ch);
        return p == null ? "tcp" : p.path();
    }

    int read(SocketChannel ch, ByteBuffer dst) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.read(ch, dst);
    }

    long read(SocketChannel ch, ByteBuffer[] dsts, int offset, int length) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.read(ch, dsts, offset, length);
    }

    int write(SocketChannel ch, ByteBuffer src) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.write(ch, src);
    }

    long write(SocketChannel ch, ByteBuffer[] srcs, int offset, int length) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.write(ch, srcs, offset, length);
    }

    int streamRead(SocketChannel ch, byte[] b, int off, int len, long nanos) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.streamRead(ch, b, off, len, nanos);
    }

    int streamWrite(SocketChannel ch, byte[] b, int off, int len) throws IOException {
        PairedChannel p = paired.get(ch);
        if (p == null) return SoraDelegate.NOT_PAIRED;
        p.streamWrite(ch, b, off, len);
        return 0;
    }

    int available(SocketChannel ch) throws IOException {
        PairedChannel p = paired.get(ch);
        return p == null ? SoraDelegate.NOT_PAIRED : p.available(ch);
    }

    /** A paired channel's TCP fd is polled for nothing (docs/nio.md, "Readiness"). */
    int interestOps(SocketChannel ch, int ops) {
        return paired.containsKey(ch) ? 0 : SoraDelegate.NOT_PAIRED;
    }
}
