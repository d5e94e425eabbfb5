package io.sora.transport;

/**
 * How long a blocked reader or writer spins before it sleeps, learnt per stream. Spinning pays only
 * when the peer runs on another CPU at the same time; with both ends on one CPU (or an idle peer) it
 * only burns the time the peer needs. So: spin the full budget while spinning keeps finding the data;
 * halve it each time a spin ends in sleep anyway, down to none; and once in a while (every
 * {@value #PROBE_EVERY} sleeps) try a full spin again, in case the placement changed.
 *
 * <p>Not thread-safe: each instance is used under its stream's lock.
 */
final class AdaptiveSpin {
    static final int PROBE_EVERY = 64;

    private final int max;
    private int budget;
    private int sleepsSinceProbe;
    private boolean probing;

    AdaptiveSpin(int max) {
        this.max = max;
        this.budget = max;
    }

    /** Spin iterations to try for the current wait. */
    int budget() {
        return budget;
    }

    /** The wait ended while spinning: keep spinning in full. */
    void paidOff() {
        budget = max;
        probing = false;
        sleepsSinceProbe = 0;
    }

    /** The wait had to sleep after spinning {@link #budget()} rounds. */
    void sleptAnyway() {
        if (probing) {
            probing = false;
            budget = 0;
        } else if (budget > 0) {
            budget >>= 1;
        } else if (++sleepsSinceProbe >= PROBE_EVERY) {
            sleepsSinceProbe = 0;
            probing = true;
            budget = max;
        }
    }
}
