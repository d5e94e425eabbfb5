package io.sora.transport;

/**
 * The CPU the calling thread runs on, from sora's native library ({@code sched_getcpu}), or -1 where
 * the library is not loaded ({@link Futex#availability()}). A waiting reader or writer publishes it
 * in the connection's shared state and compares it with the CPU its peer published when that peer last
 * waited ({@link RingMedium#peerCpu}): see {@link AdaptiveWait}.
 */
public final class ThisCpu {
    private ThisCpu() {
    }

    /** This thread's CPU now (it may move right after), or -1 when unknown. */
    public static int current() {
        return Futex.isAvailable() ? current0() : -1;
    }

    private static native int current0();
}
