package io.sora.transport;

/**
 * An epoll set of sora's own, through sora's native library (see {@link Futex}, which loads it): for
 * the shm doorbell loop, which watches every connection's control channel. Unlike a {@code Selector},
 * whose registrations, cancellations and changes of interest are queued for its selecting thread and
 * wake it, any thread changes this set directly ({@code epoll_ctl} may run beside {@code epoll_wait}).
 *
 * <p>Descriptors are those of channels ({@link NativeSockets#fd}): the caller keeps a channel open
 * while it changes the set for its descriptor (a descriptor number is reused as soon as it is closed),
 * and removes it before closing the channel. Available where {@link NativeSockets#fd} works.
 */
public final class NativeEpoll implements AutoCloseable {
    public static final int EPOLLIN = 0x001;
    public static final int EPOLLERR = 0x008;
    public static final int EPOLLHUP = 0x010;
    public static final int CTL_ADD = 1;
    public static final int CTL_DEL = 2;
    public static final int CTL_MOD = 3;

    private final int epfd;
    private final int wakeFd;
    private volatile boolean closed;
    /**
     * Held (read) by every {@link #ctl} and {@link #await} for as long as it uses the descriptors, and
     * (write) by {@link #close} to close them: a close from another thread (a selector's register racing
     * its close) waits until none uses them, having woken a waiter first. Without it a wait begun just
     * before the close could run on the descriptor numbers after the kernel gave them to another set, and
     * steal that set's events (found in review, 2026-11-29).
     */
    private final java.util.concurrent.locks.StampedLock use = new java.util.concurrent.locks.StampedLock();

    private NativeEpoll(int epfd, int wakeFd) {
        this.epfd = epfd;
        this.wakeFd = wakeFd;
    }

    /**
     * A new set (with its wake-up eventfd).
     *
     * @throws java.io.IOException with the error
     * @throws IllegalStateException if the library is not loaded
     */
    public static NativeEpoll open() throws java.io.IOException {
        if (!Futex.isAvailable()) throw new IllegalStateException("sora's native library is not loaded");
        int[] fds = new int[2];
        int rc = create0(fds);
        if (rc != 0) throw new java.io.IOException("epoll_create1/eventfd failed: " + NativeFiles.describe(rc));
        return new NativeEpoll(fds[0], fds[1]);
    }

    /** epoll_ctl; {@code data} must not be 0 (the wake-up's). Returns 0 or -errno. */
    public int ctl(int op, int fd, int events, long data) {
        long stamp = use.readLock();
        try {
            if (closed) return -9; // EBADF
            return ctl0(epfd, op, fd, events, data);
        } finally {
            use.unlockRead(stamp);
        }
    }

    /**
     * Waits for events ({@code timeoutMillis} < 0: no limit) and puts each into {@code out} as its data
     * and its events (two longs; data 0: {@link #wakeup}). Returns how many (0 after a signal).
     */
    public int await(long[] out, int timeoutMillis) throws java.io.IOException {
        long stamp = use.readLock();
        try {
            if (closed) throw new java.io.IOException("epoll set closed");
            int n = wait0(epfd, wakeFd, out, timeoutMillis);
            if (n < 0) throw new java.io.IOException("epoll_wait failed: " + NativeFiles.describe(n));
            return n;
        } finally {
            use.unlockRead(stamp);
        }
    }

    /** The set's own descriptor (to nest it in another epoll set: it is readable while it has events). */
    public int fd() {
        return epfd;
    }

    /** Makes a thread in {@link #await} return (or its next call, at once). */
    public void wakeup() {
        long stamp = use.readLock();
        try {
            if (!closed) wake0(wakeFd);
        } finally {
            use.unlockRead(stamp);
        }
    }

    /**
     * Closes the set: a thread waiting in it is woken, and the descriptors close once no call uses them;
     * later calls fail ({@link #ctl}: EBADF; {@link #await}: IOException). Any thread, any time.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        wake0(wakeFd); // a waiter leaves (a wait about to begin returns at once), so the write lock comes
        long stamp = use.writeLock();
        try {
            close0(wakeFd);
            close0(epfd);
        } finally {
            use.unlockWrite(stamp);
        }
    }

    private static native int create0(int[] out);

    private static native int ctl0(int epfd, int op, int fd, int events, long data);

    private static native int wait0(int epfd, int efd, long[] out, int timeoutMillis);

    private static native int wake0(int efd);

    private static native int close0(int fd);
}
