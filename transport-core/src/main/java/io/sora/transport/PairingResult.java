package io.sora.transport;

/** The outcome of pairing: a fast connection, or TCP with the reason why. Never an exception. */
public sealed interface PairingResult permits PairingResult.Paired, PairingResult.Fallback {

    record Paired(FastConnection connection) implements PairingResult {}

    /** @param reason short, trace-ready, e.g. {@code "no sora listener for port 65444"} */
    record Fallback(String reason) implements PairingResult {}
}
