package io.sora.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;

/**
 * {@link TcpConnection} on a descriptor, through libsora ({@link NativeSockets}). Every call checks first
 * that the descriptor is still the connection between the two ports it was made for (a socket the
 * application closed meanwhile, its descriptor's number given to a new file, is not touched).
 */
public final class NativeTcp implements TcpConnection {
    private final Socket socket;
    private final int fixedFd;
    private final int localPort;
    private final int remotePort;
    private final boolean[] ended = new boolean[1];

    private NativeTcp(Socket socket, int fd, int localPort, int remotePort) {
        this.socket = socket;
        this.fixedFd = fd;
        this.localPort = localPort;
        this.remotePort = remotePort;
    }

    /**
     * The TCP connection of the connected {@code socket}, or null when its descriptor cannot be reached
     * here (libsora not loaded, another socket implementation, a channel's descriptor out of reach).
     */
    public static TcpConnection of(Socket socket) {
        if (NativeSockets.socketFd(socket) < 0) return null;
        if (!(socket.getLocalSocketAddress() instanceof InetSocketAddress l)
                || !(socket.getRemoteSocketAddress() instanceof InetSocketAddress r)) {
            return null;
        }
        return new NativeTcp(socket, -1, l.getPort(), r.getPort());
    }

    /** A descriptor this process made itself (the RDMA self-test's), open while this is used. */
    public static TcpConnection ofDescriptor(int fd, int localPort, int remotePort) {
        return new NativeTcp(null, fd, localPort, remotePort);
    }

    /** The socket's descriptor now: it is looked up for each call, as the socket may have been closed. */
    private int fd() throws IOException {
        if (socket == null) return fixedFd;
        int fd = NativeSockets.socketFd(socket);
        if (fd < 0) throw new SocketException("Socket closed");
        return fd;
    }

    @Override
    public void write(byte[] bytes) throws IOException {
        NativeSockets.send(fd(), bytes, localPort, remotePort);
    }

    @Override
    public int peek(byte[] into, int atLeast, int millis) throws IOException {
        return NativeSockets.peek(fd(), into, atLeast, millis, ended, localPort, remotePort);
    }

    @Override
    public boolean ended() {
        return ended[0];
    }

    @Override
    public void discard(int n) throws IOException {
        NativeSockets.discard(fd(), n, localPort, remotePort);
    }

    @Override
    public long inode() {
        try {
            return NativeSockets.fdInode(fd());
        } catch (IOException closed) {
            return -1;
        }
    }

    @Override
    public void shutdown() {
        try {
            NativeSockets.shutdown(fd(), localPort, remotePort);
        } catch (IOException closed) {
            // closed: nothing is left to shut down
        }
    }
}
