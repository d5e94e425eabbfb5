package io.sora.transport;

/**
 * The server agent's decision, made when a pairing request arrives (possibly before the application
 * calls {@code accept()}): may this connection use the fast path, and with which options.
 */
@FunctionalInterface
public interface AcceptPolicy {
    Decision decide(ConnectionKey key);

    /** Either {@link Allow} or {@link Refuse}. */
    sealed interface Decision permits Allow, Refuse {}

    record Allow(PairingOptions options) implements Decision {}

    /** @param reason short, trace-ready, e.g. {@code "client 10.0.0.9 not in accept list (server.conf:3)"} */
    record Refuse(String reason) implements Decision {}
}
