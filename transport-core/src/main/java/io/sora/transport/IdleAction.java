package io.sora.transport;

import java.util.concurrent.locks.ReentrantLock;

/**
 * What a ring stream's close leaves for the last read or write to leave (the close never waits for
 * them): run once, by whichever thread finds the stream's lock free after the close, so that it runs
 * when no read or write can touch the ring any more (a later one fails before it does).
 */
final class IdleAction {
    /**
     * The action left; through a field updater, not an AtomicReference: the latter's swap goes through a
     * VarHandle, a dozen calls interpreted (every connection's close, in a cold JVM's first connections).
     */
    private volatile Runnable pending;
    private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<IdleAction, Runnable> PENDING =
            java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(IdleAction.class, Runnable.class, "pending");

    /** Leaves {@code action} and runs it now if the lock is free. */
    void set(Runnable action, ReentrantLock lock) {
        pending = action;
        runIfIdle(lock);
    }

    boolean isPending() {
        return pending != null;
    }

    /**
     * Claims the action if nobody holds the lock, runs it after. No lock is taken: the stream is closed
     * (a volatile write) before the action is left, and each read or write, once it holds the lock, looks
     * at that before it touches the ring; so either the lock is seen held here (its holder runs the
     * action as it leaves) or the holder that comes after sees the close and leaves the ring alone. The
     * claim is one swap, so whoever gets the action runs it, once. (It took the lock itself until
     * 2026-11-29: a try-lock and an unlock are some thirty calls interpreted, on every connection's
     * close in a cold JVM's first few hundred connections.)
     */
    void runIfIdle(ReentrantLock lock) {
        // an outer frame of this thread (write(int), read()) may still be inside: it runs it on leaving
        if (lock.isLocked()) return;
        Runnable action = PENDING.getAndSet(this, null);
        if (action != null) action.run();
    }
}
