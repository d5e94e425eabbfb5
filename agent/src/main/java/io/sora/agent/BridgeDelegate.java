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
import java.util.Map;

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

    BridgeDelegate(RuleSet rules, Map<Provider, Transport> transports, Tracer tracer, ConnectionRegistry registry) {
        this.tracer = tracer;
        this.recorder = new PathRecorder(tracer, registry);
        this.client = new ClientDecisions(rules, transports, recorder);
        this.listeners = new Listeners(rules, transports, tracer);
        this.hotAttach = new HotAttach(rules, listeners);
        this.server = new ServerDecisions(rules, transports, recorder, hotAttach);
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
        if (l == null || socket.getClass() != Socket.class) {
            return;
        }
        if (l.adopted()) {
            hotAttach.deciding(socket);
        }
        server.decide(socket, l);
    }

    @Override
    public void serverClosed(ServerSocket serverSocket) {
        Listeners.Server l = listeners.closed(serverSocket);
        if (l != null) {
            hotAttach.closed(l);
        }
    }

    // ---------------------------------------------------------------- streams and lifecycle

    /** The socket's fast path; a socket an accept() begun before a hot attach returned is decided here. */
    private PairedSocket paired(Socket socket) {
        PairedSocket p = recorder.paired(socket);
        if (p == null && hotAttach.active()) {
            Listeners.Server late = hotAttach.lateAccepted(socket);
            if (late != null) {
                server.decide(socket, late);
            }
            p = recorder.paired(socket);
        }
        return p;
    }

    @Override
    public InputStream inputStream(Socket socket, InputStream tcp) {
        PairedSocket p = paired(socket);
        return p == null ? tcp : p.in(socket);
    }

    @Override
    public OutputStream outputStream(Socket socket, OutputStream tcp) {
        PairedSocket p = paired(socket);
        return p == null ? tcp : p.out(socket);
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
    public void closed(Socket socket) {
        client.withdraw(socket);
        recorder.closed(socket);
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
        PairedSocket p = recorder.paired(socket);
        return p == null ? "tcp" : p.connection().path();
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
     * {@code whenDone} runs once no paired connection is left.
     */
    void stop(Runnable whenDone) {
        hotAttach.stop();
        client.stop();
        closeListeners();
        DetachedConnections<PairedSocket> left = new DetachedConnections<>();
        recorder.handOver(left);
        left.start(p -> p.cleanable.clean(), whenDone);
    }
}
