package io.sora.transport;

import java.io.Closeable;
import java.time.Duration;

/**
 * A transport's listener for one bound {@code ServerSocket}: it answers pairing requests as they
 * arrive (deciding each with the {@link AcceptPolicy}), and hands the paired connection to
 * {@link #awaitPairing} when the application accepts the matching TCP socket.
 */
public interface ServerBinding extends Closeable {
    /**
     * Called right after {@code accept()} returned the TCP socket named by {@code key}. Waits at most
     * {@code wait} for the client's pairing request; if none came the connection is marked TCP (a late
     * request is refused, so both ends always agree). Never throws.
     */
    PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks);

    /**
     * As {@link #awaitPairing}, for a connection that {@code accept()} returned on this thread just now (not
     * one decided later, at its first stream after a hot attach): the medium may take it as established in
     * this host's kernel without asking the kernel (shm's check of a request, docs/shm.md, "Server checks").
     */
    default PairingResult awaitAccepted(ConnectionKey key, Duration wait, SocketHooks hooks) {
        return awaitPairing(key, wait, hooks);
    }

    /** Stops answering; pending, never-accepted pairings are released. Idempotent. */
    @Override
    void close();
}
