package io.sora.agent;

import io.sora.agent.bootstrap.SoraDelegate;
import io.sora.agent.status.ConnectionRegistry;
import io.sora.agent.status.DetachedConnections;
import io.sora.agent.status.ProcessSockets;
import io.sora.rules.Provider;
import io.sora.rules.RuleSet;
import io.sora.trace.Tracer;
import io.sora.transport.Transport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The bootstrap bridge's delegate: each instrumented {@code java.net} call, routed to the class whose
 * job it is. A connection's path is decided in {@link ClientDecisions} (connect) or
 * {@link ServerDecisions} (accept), with the listeners of {@link Listeners} and, after a hot attach,
 * {@link HotAttach}; {@link PathRecorder} records it and serves a paired socket's streams.
 * Also the agent's handle on all of them: {@link #adopt} at attach, {@link #closeListeners} at exit,
 * {@link #stop} at detach.
 */
final class BridgeDelegate implements SoraDelegate {
    /** Set on the agent's own threads (the warm-up) whose sockets the advice must leave alone. */
    static final ThreadLocal<Boolean> INTERNAL = new ThreadLocal<>();

    private final Tracer tracer;
    private final PathRecorder recorder;
    private final ClientDecisions client;
    private final Listeners listeners;
    private final HotAttach hotAttach;
    private final ServerDecisions server;
    private final Channels channels;
    private final ChannelSelection selection;
    /** Why channels cannot be served here (null: they can); set when the channel patch is installed. */
    private volatile java.util.function.Supplier<String> channelPatchProblem = () -> "the NIO classes are not patched";

    BridgeDelegate(RuleSet rules, Map<Provider, Transport> transports, Tracer tracer, ConnectionRegistry registry) {
        this.tracer = tracer;
        this.recorder = new PathRecorder(tracer, registry);
        this.client = new ClientDecisions(rules, transports, recorder);
        this.listeners = new Listeners(rules, transports, tracer);
        this.hotAttach = new HotAttach(rules, listeners);
        this.server = new ServerDecisions(rules, transports, recorder, hotAttach);
        ChannelSelection[] sel = new ChannelSelection[1];
        this.channels = new Channels(rules, client, server, listeners, recorder, () -> {
            String p = channelPatchProblem.get();
            return p != null ? p : sel[0].check();
        }, hotAttach);
        this.selection = new ChannelSelection(channels);
        sel[0] = selection;
        channels.selection = selection;
        PathWarmup.channels(channels);
    }

    /** Socket and server socket subclasses that rules name are said through {@code unserved} (once per class). */
    void unserved(io.sora.agent.instrumentation.UnservedApis unserved) {
        client.notServed = unserved::subclass;
        listeners.notServed = unserved::subclass;
    }

    /** The channel patch is installed: {@code problem} says (once asked) whether it fits this JDK. */
    void channelPatchInstalled(java.util.function.Supplier<String> problem) {
        channelPatchProblem = problem;
    }

    // ---------------------------------------------------------------- client side

    @Override
    public void connecting(Socket socket, SocketAddress endpoint) {
        if (INTERNAL.get() == null) client.connecting(socket, endpoint);
    }

    @Override
    public void connectFailed(Socket socket) {
        client.withdraw(socket);
    }

    @Override
    public void connected(Socket socket) {
        if (INTERNAL.get() == null) client.connected(socket);
    }

    // ---------------------------------------------------------------- server side

    @Override
    public void bound(ServerSocket serverSocket) {
        if (INTERNAL.get() == null) listeners.bound(serverSocket);
    }

    @Override
    public void accepted(ServerSocket serverSocket, Socket socket) {
        if (INTERNAL.get() != null) {
            return;
        }
        Listeners.Server l = listeners.of(serverSocket);
        if (l == null) {
            l = hotAttach.serverOf(serverSocket);
        }
        if (l == null || !ServedSockets.socket(socket.getClass())) {
            return;
        }
        if (l.adopted()) {
            hotAttach.deciding(socket);
        }
        server.decide(socket, l);
    }

    /** The JDK's TLS server socket accepts through {@code implAccept}; other subclasses have no listener. */
    @Override
    public void implAccepted(ServerSocket serverSocket, Socket socket) {
        if (serverSocket.getClass().getName().equals(ServedSockets.TLS_SERVER_SOCKET)) accepted(serverSocket, socket);
    }

    @Override
    public void serverClosed(ServerSocket serverSocket) {
        hotAttach.serverClosed(listeners.closed(serverSocket), serverSocket::getLocalSocketAddress);
    }

    // ---------------------------------------------------------------- streams and lifecycle

    /** The socket's fast path; a socket an accept() begun before a hot attach returned is decided here. */
    private PairedSocket paired(Socket socket) {
        PairedSocket p = recorder.paired(socket);
        if (p == null && client.awaitDecision(socket)) p = recorder.paired(socket);
        if (p == null && hotAttach.active()) {
            Listeners.Server late = hotAttach.lateAccepted(socket);
            if (late != null) {
                server.decideLate(socket, late);
            }
            p = recorder.paired(socket);
        }
        return p;
    }

    @Override
    public InputStream inputStream(Socket socket, InputStream tcp) {
        PairedSocket p = paired(socket);
        return p == null ? tcp : p.in(socket, tcp);
    }

    @Override
    public OutputStream outputStream(Socket socket, OutputStream tcp) {
        PairedSocket p = paired(socket);
        return p == null ? tcp : p.out(socket, tcp);
    }

    @Override
    public void shutdownInput(Socket socket) {
        PairedSocket p = recorder.paired(socket);
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
        PairedSocket p = recorder.paired(socket);
        try {
            if (p != null) {
                p.connection().shutdownOutput();
            }
        } catch (IOException ignored) {
            // as above
        }
    }

    @Override
    public void soTimeoutSet(Socket socket) {
        PairedSocket.soTimeoutSet(socket);
    }

    @Override
    public void closing(Socket socket) {
        PairedSocket p = recorder.paired(socket);
        if (p != null && PairedSocket.lingersZero(socket)) p.connection.resetOnClose();
    }

    @Override
    public void closed(Socket socket) {
        PairedSocket.forget(socket);
        client.withdraw(socket);
        recorder.closed(socket);
    }

    @Override
    public void methodTrace(int mtId, boolean exit, Object self, Throwable thrown) {
        if (INTERNAL.get() != null) {
            return; // the agent's own sockets (warm-up) are not the application's calls
        }
        // Unix-domain channels are sora's own rendezvous and doorbells (often opened on the application's
        // thread, inside its connect or bind), never the application's TCP: not its calls either
        if (self instanceof java.nio.channels.NetworkChannel n && !Channels.isTcp(n)) return;
        MethodTrace.emit(tracer, mtId, exit, self, thrown);
    }

    @Override
    public String pathOf(Socket socket) {
        PairedSocket p = recorder.paired(socket);
        return p == null ? "tcp" : p.connection().path();
    }

    // ---------------------------------------------------------------- channels (docs/nio.md)

    @Override
    public void channelConnecting(SocketChannel channel, SocketAddress remote) {
        if (INTERNAL.get() == null) channels.connecting(channel, remote);
    }

    @Override
    public void channelConnected(SocketChannel channel, boolean connected) {
        if (INTERNAL.get() == null) channels.connected(channel, connected);
    }

    @Override
    public int channelRead(SocketChannel channel, ByteBuffer dst) throws IOException {
        return channels.read(channel, dst);
    }

    @Override
    public long channelRead(SocketChannel channel, ByteBuffer[] dsts, int offset, int length) throws IOException {
        return channels.read(channel, dsts, offset, length);
    }

    @Override
    public int channelWrite(SocketChannel channel, ByteBuffer src) throws IOException {
        return channels.write(channel, src);
    }

    @Override
    public long channelWrite(SocketChannel channel, ByteBuffer[] srcs, int offset, int length) throws IOException {
        return channels.write(channel, srcs, offset, length);
    }

    @Override
    public int channelStreamRead(SocketChannel channel, byte[] b, int off, int len, long nanos) throws IOException {
        return channels.streamRead(channel, b, off, len, nanos);
    }

    @Override
    public int channelStreamWrite(SocketChannel channel, byte[] b, int off, int len) throws IOException {
        return channels.streamWrite(channel, b, off, len);
    }

    @Override
    public int channelAvailable(SocketChannel channel) throws IOException {
        return channels.available(channel);
    }

    @Override
    public void channelShutdown(SocketChannel channel, boolean input) {
        channels.shutdown(channel, input);
    }

    @Override
    public void channelClosing(SocketChannel channel) {
        channels.closing(channel);
    }

    @Override
    public int channelInterestOps(SocketChannel channel, int ops) {
        return channels.interestOps(channel, ops);
    }

    @Override
    public boolean channelPaired(SocketChannel channel) {
        return channels.paired(channel) != null;
    }

    @Override
    public String channelPathOf(SocketChannel channel) {
        return channels.pathOf(channel);
    }

    @Override
    public void serverChannelBound(ServerSocketChannel serverChannel) {
        if (INTERNAL.get() == null) channels.bound(serverChannel);
    }

    @Override
    public void serverChannelAccepted(ServerSocketChannel serverChannel, SocketChannel accepted) {
        if (INTERNAL.get() == null) channels.accepted(serverChannel, accepted);
    }

    @Override
    public void serverChannelClosing(ServerSocketChannel serverChannel) {
        channels.serverClosing(serverChannel);
    }

    @Override
    public void selectorRegistering(Selector selector, SelectionKey key) {
        selection.registering(selector, key);
    }

    @Override
    public void selectorKeyChanged(Selector selector, SelectionKey key) {
        selection.keyChanged(selector);
    }

    @Override
    public void selectorWakingUp(Selector selector) {
        selection.wakingUp(selector);
    }

    @Override
    public void selectorKeyReported(Selector selector) {
        selection.keyReported(selector);
    }

    @Override
    public void selectorWakeupTaken(Selector selector) {
        selection.wakeupTaken(selector);
    }

    @Override
    public void selectorClosed(Selector selector) {
        selection.closed(selector);
    }

    @Override
    public long selecting(Selector selector, long timeout) {
        return selection.selecting(selector, timeout);
    }

    @Override
    public int selected(Selector selector, Consumer<SelectionKey> action, int n) {
        return selection.selected(selector, action, n);
    }

    /** Hot attach, before the bridge is installed: see {@link HotAttach#adopt}. */
    void adopt(ProcessSockets now) {
        hotAttach.adopt(now);
    }

    /**
     * Stops every pairing listener (their rendezvous files go with them). Called at detach and from the
     * JVM's shutdown hook: a JVM that exits without closing its server sockets leaves nothing behind.
     */
    void closeListeners() {
        listeners.closeAll();
        hotAttach.closeAll();
    }

    /**
     * Detach, after the bridge delegate was removed: stops every listener (new clients fall back to TCP
     * at once) and hands the paired connections to a watcher thread that closes each fast path when the
     * application closes its socket (the close advice is gone by then), so the peer still sees the end
     * (or drops it: the watcher sees a collected socket too), and ends the cleaner's thread.
     * {@code whenDone} runs once no paired connection is left. Paired channels are closed first: without
     * the channel patch their reads would go to the TCP connection (docs/nio.md).
     */
    /** Detach, first step: closes the paired channels while the bridge still serves them (see {@link Channels#detach}). */
    void stopChannels() {
        channels.detach();
    }

    /**
     * Detach, before the bridge goes: no pairing begins or completes any more. The listeners close (waiting
     * accepts return TCP, later requests are refused) and announcements are withdrawn while the accept hook
     * can still claim what was committed: closing them only after the bridge was cleared let a client
     * commit a pairing that no accept claimed, its connection then reset (found in review, 2026-11-29).
     */
    void stopPairing() {
        hotAttach.stop();
        client.stop();
        closeListeners();
    }

    /** @return how many connections keep their fast path (handed to the watcher) */
    int stop(Runnable whenDone) {
        channels.detach();
        stopPairing();
        DetachedConnections<PairedSocket> left = new DetachedConnections<>();
        int kept = recorder.handOver(left);
        left.start(p -> p.cleanable.clean(), whenDone);
        return kept;
    }
}
