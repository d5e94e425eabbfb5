package io.sora.transport;

/**
 * For a transport's data-path warm-up, outside this package: runs the waiting policy's every branch
 * once, so that the compiled stream methods it is inlined into are not deoptimised by an application's
 * first wait of a kind the warm-up's own waits never had (see {@code AdaptiveWait.exercise}).
 */
public final class WaitProfile {
    private WaitProfile() {
    }

    /** A few waits, each ended by its budget: about 0.3 ms in all (the shm warm-up calls it every 512th round). */
    public static void exercise() {
        AdaptiveWait.exercise();
    }
}
