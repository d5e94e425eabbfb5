package io.sora.rules;

import java.time.Duration;
import java.util.Objects;

/**
 * The {@code key=value} options of a rule, with JSOR's defaults for those not given. Immutable, thread-safe.
 *
 * <table>
 *   <caption>Options</caption>
 *   <tr><th>key</th><th>meaning</th><th>default</th><th>range</th></tr>
 *   <tr><td>{@code sndbuf}</td><td>send buffer size, bytes (suffix k = KiB, m = MiB)</td><td>32768</td>
 *       <td>4096 .. 1 GiB</td></tr>
 *   <tr><td>{@code rcvbuf}</td><td>receive buffer size, bytes</td><td>45056</td><td>4096 .. 1 GiB</td></tr>
 *   <tr><td>{@code wait}</td><td>how long to wait for fast-path pairing before using TCP
 *       (bare number = ms, or suffix ms / s)</td><td>100 ms</td><td>0 .. 60 s</td></tr>
 * </table>
 */
public final class RuleOptions {

    /** JSOR's send buffer size (its SampleClient printed {@code SBuf: 32768 bytes}). */
    public static final int DEFAULT_SEND_BUFFER_SIZE = 32768;
    /** JSOR's receive buffer size (its SampleClient printed {@code RBuf: 45056 bytes}). */
    public static final int DEFAULT_RECEIVE_BUFFER_SIZE = 45056;
    /** JSOR's default wait before falling back to TCP. */
    public static final Duration DEFAULT_FALLBACK_WAIT = Duration.ofMillis(100);
    /** Smallest buffer size accepted: one page. */
    public static final int MIN_BUFFER_SIZE = 4096;
    /** Largest buffer size accepted: 1 GiB (buffers are pinned memory). */
    public static final int MAX_BUFFER_SIZE = 1 << 30;
    /** Longest fallback wait accepted. */
    public static final Duration MAX_FALLBACK_WAIT = Duration.ofSeconds(60);

    private static final RuleOptions DEFAULTS =
            new RuleOptions(DEFAULT_SEND_BUFFER_SIZE, DEFAULT_RECEIVE_BUFFER_SIZE, DEFAULT_FALLBACK_WAIT);

    private final int sendBufferSize;
    private final int receiveBufferSize;
    private final Duration fallbackWait;

    RuleOptions(int sendBufferSize, int receiveBufferSize, Duration fallbackWait) {
        this.sendBufferSize = sendBufferSize;
        this.receiveBufferSize = receiveBufferSize;
        this.fallbackWait = Objects.requireNonNull(fallbackWait, "fallbackWait");
    }

    /** The options of a rule that sets none: sndbuf 32768, rcvbuf 45056, wait 100 ms. */
    public static RuleOptions defaults() {
        return DEFAULTS;
    }

    /** {@code sndbuf}: bytes of the fast path's send buffer. */
    public int sendBufferSize() {
        return sendBufferSize;
    }

    /** {@code rcvbuf}: bytes of the fast path's receive buffer (the ring the peer writes into). */
    public int receiveBufferSize() {
        return receiveBufferSize;
    }

    /** {@code wait}: how long connection set-up waits for the fast path to pair before the connection stays on TCP. */
    public Duration fallbackWait() {
        return fallbackWait;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RuleOptions other
                && sendBufferSize == other.sendBufferSize
                && receiveBufferSize == other.receiveBufferSize
                && fallbackWait.equals(other.fallbackWait);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sendBufferSize, receiveBufferSize, fallbackWait);
    }

    /** In configuration syntax, e.g. {@code sndbuf=32768 rcvbuf=45056 wait=100ms}. */
    @Override
    public String toString() {
        return "sndbuf=" + sendBufferSize + " rcvbuf=" + receiveBufferSize + " wait=" + fallbackWait.toMillis() + "ms";
    }
}
