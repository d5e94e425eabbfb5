package io.sora.transport;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.SelectableChannel;

/**
 * Calls on a channel's file descriptor that the JDK makes expensive, through sora's native library
 * (see {@link Futex}, which loads it): the peer's user id of a Unix-domain socket ({@code SO_PEERCRED};
 * the JDK's {@code SO_PEERCRED} option turns it into a {@code UnixDomainPrincipal}, which reads
 * {@code /etc/passwd} for the user's name on every call: 38 us of each shm pairing's client, 26 of its
 * server, measured), and a wait until the descriptor is readable ({@code poll}; a {@code Selector}
 * made and closed for one reply cost each pairing's client another 38 us).
 *
 * <p>Available when the library is loaded and the JDK's {@code sun.nio.ch} is exported to this
 * class's module (the agent exports it to its own class loader; tests with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}). Callers check {@link #fd} and keep a
 * pure-Java way for when it is -1.
 */
public final class NativeSockets {
    private NativeSockets() {
    }

    /** {@code sun.nio.ch.SelChImpl.getFDVal()} as (SelectableChannel) -> int, or null where it cannot be reached. */
    private static final MethodHandle FD_VAL = fdValHandle();

    private static MethodHandle fdValHandle() {
        try {
            Class<?> selCh = Class.forName("sun.nio.ch.SelChImpl");
            if (!selCh.getModule().isExported(selCh.getPackageName(), NativeSockets.class.getModule())) return null;
            return MethodHandles.lookup().findVirtual(selCh, "getFDVal", MethodType.methodType(int.class))
                    .asType(MethodType.methodType(int.class, SelectableChannel.class));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /**
     * The descriptor of an open channel of the JDK's own implementation, for the calls below; -1 when
     * those cannot be made (the library not loaded, {@code sun.nio.ch} not exported to sora, or a
     * channel of another implementation). Valid only while the channel is open: the caller keeps it open.
     */
    public static int fd(SelectableChannel channel) {
        if (!channel.isOpen()) return -1;
        return fdOfClosing(channel);
    }

    /**
     * As {@link #fd}, for a channel whose close has begun on the calling thread and not yet reached its
     * descriptor (the JDK's {@code implCloseSelectableChannel} as it begins: {@code isOpen()} is false
     * already, the descriptor still open).
     */
    public static int fdOfClosing(SelectableChannel channel) {
        if (FD_VAL == null || !Futex.isAvailable()) return -1;
        try {
            return (int) FD_VAL.invokeExact(channel);
        } catch (ClassCastException e) {
            return -1; // not sun.nio.ch's
        } catch (Throwable e) {
            return -1;
        }
    }

    /** Whether {@link #fd} can give descriptors here (the library loaded, {@code sun.nio.ch} reachable). */
    public static boolean descriptorCallsOn() {
        return FD_VAL != null && Futex.isAvailable();
    }

    /**
     * What of this class works here, for the start-up trace: {@code libsora loaded, descriptor calls on},
     * {@code ... off (...)} when {@code sun.nio.ch} is not exported to sora's module, or why libsora did not load.
     */
    public static String availability() {
        if (!Futex.isAvailable()) {
            return "libsora not loaded: " + Futex.availability().unavailabilityCause().map(Throwable::getMessage).orElse("?");
        }
        return FD_VAL != null ? "libsora loaded, descriptor calls on"
                : "libsora loaded, descriptor calls off (sun.nio.ch is not exported to " + NativeSockets.class.getModule() + ")";
    }

    /** The effective user id of the peer of the connected Unix-domain socket {@code fd}; {@code -errno} on failure. */
    public static long peerUid(int fd) {
        return peerUid0(fd);
    }

    /**
     * Whether the socket {@code fd} has {@code SO_LINGER} on with 0 seconds (its close is a reset); false
     * when it cannot tell ({@code fd} negative, libsora not loaded, the call failed).
     */
    public static boolean lingersZero(int fd) {
        if (fd < 0 || !Futex.isAvailable()) return false;
        return lingersZero0(fd) == 1;
    }

    /** This process's effective user id (the one its peers see). */
    public static long effectiveUid() {
        return effectiveUid0();
    }

    /**
     * Waits up to {@code millis} until {@code fd} is readable (or at its end, or in error: a read then
     * says which). Not woken by {@link Thread#interrupt}: callers wait in bounded slices.
     *
     * @return true when readable, false on timeout (or a signal: the caller re-checks its deadline)
     * @throws java.io.IOException with {@code errno} when the wait itself fails
     */
    public static boolean awaitReadable(int fd, int millis) throws java.io.IOException {
        int rc = awaitReadable0(fd, millis);
        if (rc < 0) throw new java.io.IOException("poll failed: " + NativeFiles.describe(rc));
        return rc == 1;
    }

    /**
     * A TCP connection of this process to itself on the local address {@code address}, made in native
     * code without loading the JDK's socket classes: the RDMA self-test runs on the agent's start thread
     * while {@code main} may be loading {@code java.net.ServerSocket}, held until the start is done; had the
     * start thread loaded that class too, each would wait for the other (the agent's start gate, then TCP).
     * Closing it closes the listening socket and both ends.
     */
    public static final class TcpPair implements java.io.Closeable {
        private final int[] fds;
        public final int serverPort;
        public final int clientPort;

        private TcpPair(int[] r) {
            this.fds = new int[] {r[0], r[1], r[2]};
            this.serverPort = r[3];
            this.clientPort = r[4];
        }

        /** The client end, as a {@link TcpConnection} (valid until this is closed). */
        public TcpConnection clientEnd() {
            return NativeTcp.ofDescriptor(fds[1], clientPort, serverPort);
        }

        /** The accepted end, as a {@link TcpConnection} (valid until this is closed). */
        public TcpConnection acceptedEnd() {
            return NativeTcp.ofDescriptor(fds[2], serverPort, clientPort);
        }

        @Override
        public void close() {
            for (int fd : fds) close0(fd);
        }
    }

    /** @throws java.io.IOException when the library is not loaded or the connection cannot be made (errno named) */
    public static TcpPair tcpPair(java.net.InetAddress address) throws java.io.IOException {
        if (!Futex.isAvailable()) throw new java.io.IOException("sora's native library is not loaded");
        int[] r = new int[5];
        int rc = tcpPair0(address.getAddress(), r);
        if (rc != 0) throw new java.io.IOException("TCP connection to " + address.getHostAddress() + " failed: " + NativeFiles.describe(rc));
        return new TcpPair(r);
    }

    /** The kernel's number of an established TCP connection ({@link #tcpState}). */
    public static final int TCP_ESTABLISHED = 1;
    /** The kernel's number of a TCP connection whose peer has closed its end. */
    public static final int TCP_CLOSE_WAIT = 8;
    /** The kernel's number of a listening socket: what the lookup finds for a four-tuple with no connection on a listened-to port. */
    public static final int TCP_LISTEN = 10;

    /**
     * The kernel's state of the TCP socket of this network namespace whose local end is {@code local} and
     * remote end {@code remote} (one exact sock_diag lookup, not a scan of {@code /proc/net/tcp}): {@link
     * #TCP_ESTABLISHED}, {@link #TCP_CLOSE_WAIT}, another of the kernel's states ({@link #TCP_LISTEN}: no
     * such connection, but a socket listening on the local end's port), 0 when there is no such socket, -1
     * when it cannot be told (no native library, the lookup failed, addresses of two families).
     * An IPv4 connection is found by its IPv4 ends whether the socket is of family IPv4 or IPv6 (dual stack).
     */
    public static int tcpState(java.net.InetSocketAddress local, java.net.InetSocketAddress remote) {
        return tcpState(local, remote, null);
    }

    /**
     * As {@link #tcpState(java.net.InetSocketAddress, java.net.InetSocketAddress)}; when a connection is found
     * (not only its port's listener), {@code inode[0]} (if given) is set to its socket's inode: 0 while it waits
     * in its listener's accept queue, the accepted socket's once accepted ({@link #fdInode} of its descriptor),
     * which tells it from a later connection reusing the four-tuple. Left as it was otherwise.
     */
    public static int tcpState(java.net.InetSocketAddress local, java.net.InetSocketAddress remote, long[] inode) {
        if (!Futex.isAvailable() || local.getAddress() == null || remote.getAddress() == null) return -1;
        byte[] l = local.getAddress().getAddress();
        byte[] r = remote.getAddress().getAddress();
        if (l.length != r.length) return -1;
        int ifindex = local.getAddress() instanceof java.net.Inet6Address six && six.isLinkLocalAddress() ? six.getScopeId() : 0;
        try {
            int rc = tcpState0(l, local.getPort(), r, remote.getPort(), Math.max(0, ifindex), inode);
            return rc < 0 ? -1 : rc;
        } catch (UnsatisfiedLinkError e) {
            return -1; // an older library without the call
        }
    }

    /**
     * An IPv6 link-local address without its scope (a key's address as the wire carries it): {@link #tcpState}
     * cannot find such a connection, which the kernel keys by its interface too, and finds only the listener.
     */
    public static boolean unscopedLinkLocal(java.net.InetAddress a) {
        return a instanceof java.net.Inet6Address six && six.isLinkLocalAddress() && six.getScopeId() == 0;
    }

    /**
     * The descriptor of {@code socket} (a {@code java.net.Socket} of the JDK's own implementation, or the
     * adaptor of one of its channels), -1 when it cannot be had (libsora not loaded, another
     * implementation, not created, closed). Valid only while the socket is open.
     */
    public static int socketFd(java.net.Socket socket) {
        if (!Futex.isAvailable() || socket.isClosed()) return -1;
        if (socket.getChannel() != null) return fd(socket.getChannel());
        try {
            return socketFd0(socket);
        } catch (UnsatisfiedLinkError e) {
            return -1; // an older library without the call
        }
    }

    /**
     * Writes all of {@code bytes} (at most 256) on the connected TCP socket {@code fd}, provided its local
     * and remote ports are still {@code localPort} and {@code remotePort}: a descriptor closed meanwhile
     * by another thread, its number given to a new file, is not written to.
     *
     * @throws java.io.IOException with {@code errno}, or "not the connection" when the ports differ
     */
    public static void send(int fd, byte[] bytes, int localPort, int remotePort) throws java.io.IOException {
        int rc = send0(fd, bytes, localPort, remotePort);
        if (rc == -9 /* EBADF */) throw notTheConnection(fd, localPort, remotePort);
        if (rc < 0) throw new java.io.IOException("send on the TCP connection failed: " + NativeFiles.describe(rc));
        if (rc > 0) throw new TcpConnection.PartlyWritten(rc, bytes.length);
    }

    /**
     * Copies up to {@code into.length} (at most 256) bytes from the front of what the TCP socket {@code fd}
     * received, without taking them, after waiting at most {@code millis} until {@code atLeast} (1 to
     * {@code into.length}) are there or the stream ended, provided {@code fd} is still the connection between the two ports (as {@link #send} checks).
     * Returns the count copied (0: none yet); -1 at the end of the stream with nothing received.
     * {@code ended[0]} is set when the peer's end was seen (no more bytes come).
     */
    public static int peek(int fd, byte[] into, int atLeast, int millis, boolean[] ended, int localPort, int remotePort)
            throws java.io.IOException {
        int[] hup = new int[1];
        int rc = peek0(fd, into, atLeast, millis, hup, localPort, remotePort);
        if (rc == -9 /* EBADF */) throw notTheConnection(fd, localPort, remotePort);
        ended[0] = hup[0] != 0 || rc == -61 /* ENODATA */;
        if (rc == -61) return -1;
        if (rc < 0) throw new java.io.IOException("peek on the TCP connection failed: " + NativeFiles.describe(rc));
        return rc;
    }

    /** Takes {@code n} (at most 256) bytes {@link #peek} showed at the front of {@code fd} (checked as {@link #send}). */
    public static void discard(int fd, int n, int localPort, int remotePort) throws java.io.IOException {
        int rc = discard0(fd, n, localPort, remotePort);
        if (rc == -9 /* EBADF */) throw notTheConnection(fd, localPort, remotePort);
        if (rc != n) throw new java.io.IOException("could not take " + n + " bytes from the TCP connection: "
                + (rc < 0 ? NativeFiles.describe(rc) : rc + " taken"));
    }

    /**
     * {@code shutdown(fd, SHUT_RDWR)} if {@code fd} is still the connection between the two ports; failures
     * ignored (a connection reset already has no direction left).
     */
    public static void shutdown(int fd, int localPort, int remotePort) {
        shutdown0(fd, localPort, remotePort);
    }

    private static java.net.SocketException notTheConnection(int fd, int localPort, int remotePort) {
        return new java.net.SocketException("descriptor " + fd + " is no longer the TCP connection " + localPort + " -> "
                + remotePort + " (closed meanwhile?)");
    }

    private static native int socketFd0(java.net.Socket socket);

    private static native int send0(int fd, byte[] bytes, int localPort, int remotePort);

    private static native int peek0(int fd, byte[] into, int atLeast, int millis, int[] hup, int localPort, int remotePort);

    private static native int discard0(int fd, int n, int localPort, int remotePort);

    private static native int shutdown0(int fd, int localPort, int remotePort);

    /** The inode of descriptor {@code fd} ({@code fstat}); -1 when it cannot be had. */
    public static long fdInode(int fd) {
        if (fd < 0 || !Futex.isAvailable()) return -1;
        try {
            long rc = fdInode0(fd);
            return rc < 0 ? -1 : rc;
        } catch (UnsatisfiedLinkError e) {
            return -1;
        }
    }

    private static native long fdInode0(int fd);

    private static native int tcpState0(byte[] local, int localPort, byte[] remote, int remotePort, int ifindex, long[] inode);

    private static native int tcpPair0(byte[] address, int[] out);

    private static native int close0(int fd);

    private static native long peerUid0(int fd);

    private static native long effectiveUid0();

    private static native int lingersZero0(int fd);

    private static native int awaitReadable0(int fd, int millis);
}
