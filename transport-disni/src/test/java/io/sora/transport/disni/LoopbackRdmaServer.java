package io.sora.transport.disni;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback server socket with an RDMA binding for its port over {@link FakeVerbs} (connections handed in as
 * the CM's CONNECT_REQUESTs would be), real TCP connections made and accepted on it, and RDMA connections
 * announced from the client host. Closing it closes all of them, the last made first.
 */
final class LoopbackRdmaServer implements AutoCloseable {
    final ServerSocket serverSocket;
    final RdmaServerBinding binding;
    private final PairingOptions options;
    private final List<AutoCloseable> made = new ArrayList<>();

    LoopbackRdmaServer(PairingOptions options) throws IOException {
        this.options = options;
        serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        made.add(serverSocket);
        InetSocketAddress bound = (InetSocketAddress) serverSocket.getLocalSocketAddress();
        // announcements count for a minute: a loaded machine's slow steps must not age them out
        binding = new RdmaServerBinding(bound, bound, key -> new AcceptPolicy.Allow(options), Tracer.OFF, 0, 0, 60_000_000_000L);
        made.add(binding::close);
    }

    /** A TCP connection, made and accepted: [0] client, [1] server side. */
    Socket[] tcp() throws IOException {
        Socket c = new Socket(serverSocket.getInetAddress(), serverSocket.getLocalPort());
        made.add(c);
        Socket s = serverSocket.accept();
        made.add(s);
        return new Socket[] {c, s};
    }

    /** An RDMA connection announced from the client host (before a TCP connect), its HELLO not sent yet. */
    FakeRdmaConnection announce() throws IOException {
        FakeRdmaConnection l = FakeRdmaConnection.open(binding, InetAddress.getLoopbackAddress(), options.receiveBufferSize(), true);
        made.add(l.client()::abort);
        return l;
    }

    /** The key as the client agent builds it: (local, remote). */
    static ConnectionKey clientKey(Socket[] t) {
        return new ConnectionKey((InetSocketAddress) t[0].getLocalSocketAddress(), (InetSocketAddress) t[0].getRemoteSocketAddress());
    }

    /** The key as the server agent builds it from the accepted socket: (remote, local). */
    static ConnectionKey serverKey(Socket[] t) {
        return new ConnectionKey((InetSocketAddress) t[1].getRemoteSocketAddress(), (InetSocketAddress) t[1].getLocalSocketAddress());
    }

    @Override
    public void close() throws Exception {
        for (int i = made.size() - 1; i >= 0; i--) made.get(i).close();
    }
}
