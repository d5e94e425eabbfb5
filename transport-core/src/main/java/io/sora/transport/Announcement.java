package io.sora.transport;

import java.io.Closeable;

/**
 * A client's notice to a server's listener, given before the TCP connect, that a pairing request for
 * the coming connection will follow. A server that sees no notice pending when it accepts a connection
 * knows its client will not pair and serves it over TCP at once: a client without sora never waits
 * for a pairing. Handed to {@link Transport#connect(ConnectionKey, PairingOptions, SocketHooks,
 * Announcement)} once the TCP connect succeeded; closed (withdrawn) when the connect failed.
 */
public interface Announcement extends Closeable {
    /** Withdraws the notice (the server stops counting it at once). Idempotent, never throws. */
    @Override
    void close();
}
