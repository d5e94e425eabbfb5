package io.sora.transport;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Names one application TCP connection by its two ends, as the client sees them: {@code client} is
 * the client socket's local address, {@code server} its remote address. On the server the same key
 * is built from an accepted socket as (remote, local), so both agents name the connection alike.
 */
public record ConnectionKey(InetSocketAddress client, InetSocketAddress server) {
    public ConnectionKey {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(server, "server");
    }

    @Override
    public String toString() {
        return client + "->" + server;
    }
}
