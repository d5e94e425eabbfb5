package io.sora.transport;

import java.time.Duration;
import java.util.Objects;

/**
 * Sizes and limits for pairing one connection, taken from the matching rule's options.
 *
 * @param sendBufferSize    bytes of the ring this side writes into (the peer's receive ring)
 * @param receiveBufferSize bytes of the ring this side owns and reads from
 * @param fallbackWait      how long pairing may take before the connection stays on TCP
 */
public record PairingOptions(int sendBufferSize, int receiveBufferSize, Duration fallbackWait) {
    /** The largest ring either path makes, in bytes (256 MiB): a larger receive size is used as this. */
    public static final int MAX_RING = 256 << 20;

    /** JSOR's socket buffer sizes (32 KiB send, 44 KiB receive) and its 100 ms fallback wait. */
    public static final PairingOptions DEFAULT = new PairingOptions(32768, 45056, Duration.ofMillis(100));

    public PairingOptions {
        if (sendBufferSize <= 0) throw new IllegalArgumentException("sendBufferSize must be > 0: " + sendBufferSize);
        if (receiveBufferSize <= 0) throw new IllegalArgumentException("receiveBufferSize must be > 0: " + receiveBufferSize);
        // a ring holds at most MAX_RING on either path: a larger rcvbuf (JSOR's files may say up to 1 GiB) is
        // used as that, by both ends alike (the client announced it whole, the server's check refused it,
        // and every connection was TCP with a reason naming the client's side only)
        if (receiveBufferSize > MAX_RING) receiveBufferSize = MAX_RING;
        Objects.requireNonNull(fallbackWait, "fallbackWait");
        if (fallbackWait.isNegative()) throw new IllegalArgumentException("fallbackWait must be >= 0: " + fallbackWait);
    }
}
