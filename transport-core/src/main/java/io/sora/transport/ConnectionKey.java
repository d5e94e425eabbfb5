package io.sora.transport;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Names one application TCP connection by its two ends, as the client sees them: {@code client} is
 * the client socket's local address, {@code server} its remote address. On the server the same key
 * is built from an accepted socket as (remote, local), so both agents name the connection alike.
 *
 * <p>{@code equals}, {@code hashCode} and {@code toString} are written out: a record's generated ones
 * link through {@code java.lang.runtime.ObjectMethods}, whose shared method handles cache the last
 * record type they were adapted to (strongly on JDK 17, softly on later JDKs), which kept a detached
 * agent's class loader reachable (issue 12, {@code DetachReleasesEverythingIT}).
 */
public record ConnectionKey(InetSocketAddress client, InetSocketAddress server) {
    public ConnectionKey {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(server, "server");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionKey k && client.equals(k.client) && server.equals(k.server);
    }

    @Override
    public int hashCode() {
        return 31 * client.hashCode() + server.hashCode();
    }

    @Override
    public String toString() {
        return client + "->" + server;
    }
}
