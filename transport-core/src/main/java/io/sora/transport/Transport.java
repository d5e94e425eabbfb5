package io.sora.transport;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A fast-path medium ({@code shm}, {@code rdma}). A client announces its pairing before its TCP
 * connect ({@link #announce}: shm over its rendezvous socket, rdma by making its RDMA connection), and
 * pairs a fast path with the TCP connection out of band once that is made. Nothing a transport does
 * ever puts a byte on the TCP connection, so a peer without sora never sees one.
 */
public interface Transport {
    /** {@code "shm"} or {@code "rdma"}. */
    String name();

    /** Probed once; cheap afterwards. */
    Availability availability();

    /**
     * Starts answering pairing requests for a server socket bound to {@code bound} (possibly a
     * wildcard address). Throws when the listener cannot be set up; the caller then serves that
     * server socket over TCP only.
     */
    ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) throws IOException;

    /**
     * Client side, right after the TCP connect succeeded: tries to pair within
     * {@code options.fallbackWait()}. Never throws; a failure is a {@link PairingResult.Fallback}.
     */
    PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks);

    /**
     * Client side, right before the TCP connect to {@code server}: announces the pairing request
     * that will follow (see {@link Announcement}). Null when there is nothing to announce to (no
     * listener of this medium for that server here, or a medium whose server cannot wait for
     * announcements). Never throws.
     */
    default Announcement announce(InetSocketAddress server, PairingOptions options) {
        return null;
    }

    /**
     * {@link #announce(InetSocketAddress, PairingOptions)} for a medium that needs the connection's
     * local port before the TCP connect (rdma names its RDMA connection after it): {@code local} binds
     * the application's socket (if it is not bound yet) and returns its local address. Never throws.
     */
    default Announcement announce(InetSocketAddress server, PairingOptions options, LocalEnd local) {
        return announce(server, options);
    }

    /** The client socket's local end, bound on demand (see {@link #announce(InetSocketAddress, PairingOptions, LocalEnd)}). */
    @FunctionalInterface
    interface LocalEnd {
        /** Binds the socket to an ephemeral port if it is not bound yet; its local address (maybe a wildcard). */
        InetSocketAddress bind() throws IOException;
    }

    /**
     * {@link #connect(ConnectionKey, PairingOptions, SocketHooks)} for a connection announced by
     * {@link #announce}; {@code announced} (maybe null) is taken over: used or closed. Never throws.
     */
    default PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks, Announcement announced) {
        if (announced != null) announced.close();
        return connect(key, options, hooks);
    }

    /**
     * The JVM is exiting (the agent's shutdown hook, after its listeners closed): end the transport's
     * own background threads, waiting briefly. HotSpot's exit waits up to 300 ms for every thread
     * blocked in native code (a selector, a native event channel), so a transport thread left blocked
     * would make the application exit that much later than without the agent. Default: nothing.
     */
    default void jvmExiting() {
    }

    /**
     * The agent is detaching (after its listeners closed): the transport's background threads and
     * native resources end as soon as nothing needs them, that is once the connections still open on
     * this transport (they keep their fast path across a detach) have closed; at once when there are
     * none. Nothing of the transport may then keep the detached agent's class loader reachable, so
     * that a later attach loads everything afresh. Never throws. Default: nothing.
     */
    default void detach() {
    }
}
