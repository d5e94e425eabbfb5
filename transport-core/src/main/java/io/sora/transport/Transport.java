package io.sora.transport;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A fast-path medium ({@code shm}, {@code rdma}). The application's TCP connection is always made
 * first; the transport then pairs a fast path with it out of band. Nothing a transport does ever puts
 * a byte on the TCP connection, so a peer without sora never sees one.
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
}
