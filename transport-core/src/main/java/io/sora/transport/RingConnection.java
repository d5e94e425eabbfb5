package io.sora.transport;

import java.io.IOException;
import java.net.SocketException;
import java.util.Objects;

/**
 * A {@link FastConnection} over any {@link RingMedium}: a {@link RingInputStream} and a
 * {@link RingOutputStream} on one medium, plus half-close and close. Every medium (shm, rdma) uses
 * this class, so socket semantics are implemented once.
 *
 * <p>Close order: both engines are told first (blocked threads wake and throw), then the medium
 * publishes {@link RingMedium#CLOSED} (the peer drains, then reads EOF; its writes fail), then the
 * medium is released.
 */
public class RingConnection implements FastConnection {
    /** System property overriding the spin budget before a blocked read or write sleeps. */
    public static final String SPIN_PROPERTY = "sora.spin.iterations";


    private final long id;
    private final String path;
    private final RingMedium medium;
    private final RingInputStream in;
    private final RingOutputStream out;
    /** 0 open, 1 closed. An int, not an AtomicBoolean: its compare-and-set goes through a VarHandle, which costs
     *  a dozen calls interpreted (a cold JVM's first connections), where AtomicInteger's is one Unsafe call. */
    private final java.util.concurrent.atomic.AtomicInteger closed = new java.util.concurrent.atomic.AtomicInteger();
    /** The close is abortive ({@link #resetOnClose}). */
    private volatile boolean reset;
    /** Told after every wake-up of the reader or writer (a selector waiting for this connection); may be null. */
    private volatile Runnable readinessListener;

    /**
     * @param id             from {@link #nextId()}
     * @param path           the medium's name, {@code "shm"} or {@code "rdma"}
     * @param spinIterations from {@link #spinIterationsFromSystemProperty()} unless a test says otherwise
     */
    public RingConnection(long id, String path, RingMedium medium, SocketHooks hooks, int spinIterations) {
        this.id = id;
        this.path = Objects.requireNonNull(path, "path");
        this.medium = Objects.requireNonNull(medium, "medium");
        this.in = new RingInputStream(medium, hooks, spinIterations);
        this.out = new RingOutputStream(medium, hooks, spinIterations);
        in.peerReadAll(out);
        out.ownReader(in);
        medium.setWaker(new RingMedium.Waker() {
            @Override
            public void wakeReader() {
                in.wake();
                Runnable r = readinessListener;
                if (r != null) r.run();
            }

            @Override
            public void wakeWriter() {
                out.wake();
                Runnable r = readinessListener;
                if (r != null) r.run();
            }
        });
    }

    /** A process-unique connection id, shared by every transport (trace events use it). */
    public static long nextId() {
        return ConnectionIds.next();
    }

    /**
     * {@code -Dsora.spin.iterations}: {@code 0} makes a blocked read or write sleep at once; any
     * other value (and the default) lets it spin and yield first, for as long as {@link AdaptiveWait}
     * learns pays. Busy-waiting stays on even on a one-CPU machine: there its spin phase shrinks to
     * nothing and the yield is what hands the CPU to the peer.
     */
    public static int spinIterationsFromSystemProperty() {
        int fallback = 1;
        String value = System.getProperty(SPIN_PROPERTY);
        if (value == null || value.isBlank()) return fallback;
        try {
            int n = Integer.parseInt(value.trim());
            if (n < 0) throw new IllegalArgumentException(SPIN_PROPERTY + " must be >= 0: " + value);
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SPIN_PROPERTY + " must be an integer: " + value, e);
        }
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public RingInputStream inputStream() {
        return in;
    }

    @Override
    public RingOutputStream outputStream() {
        return out;
    }

    @Override
    public void shutdownInput() throws IOException {
        if (closed.get() != 0) throw new SocketException("Socket is closed");
        in.shutdown();
    }

    @Override
    public void shutdownOutput() throws IOException {
        if (closed.get() != 0) throw new SocketException("Socket is closed");
        out.shutdown();
    }

    /**
     * Runs {@code listener} (on the medium's thread; it must be quick and never block) whenever the
     * medium wakes this connection's reader or writer: the peer published, changed its flags, or died.
     * A selector arms the rings ({@link RingMedium#armReaderWaker}) and is woken through it. Null removes it.
     */
    public void setReadinessListener(Runnable listener) {
        readinessListener = listener;
    }

    /** The medium under this connection (for the transport that made it, diagnostics and tests). */
    public RingMedium medium() {
        return medium;
    }

    public boolean isClosed() {
        return closed.get() != 0;
    }

    /** The longest a close waits for a write under way on another thread to leave. */
    static final long CLOSE_WAITS_FOR_WRITE_NANOS = 1_000_000_000L;

    @Override
    public void close() {
        if (!closed.compareAndSet(0, 1)) return;
        in.closeLocal();
        out.closeLocal();
        // A write under way on another thread finishes the part it is copying (woken above, it takes no
        // more) and counts it as written: its bytes must be published before CLOSED, or the peer reads
        // the end first and never gets them (found 2026-11-29: writes racing a close lost bytes they had
        // counted). Bounded: a writer that cannot leave (stuck in the medium) does not hold the close.
        out.awaitWritesLeft(CLOSE_WAITS_FOR_WRITE_NANOS);
        try {
            medium.publishFlags(reset ? RingMedium.CLOSED | RingMedium.RESET : RingMedium.CLOSED);
        } finally {
            medium.close();
            // Both streams were woken above: a read or write in progress leaves within a wake-up, and any
            // later one fails before it touches the rings. The medium hears of it once both have left,
            // from whichever thread leaves last (the close never waits for them).
            Runnable left = new RingsDone(medium);
            in.whenIdle(left);
            out.whenIdle(left);
        }
    }

    /** Run by both streams once idle after the close: the second tells the medium its rings are done. A class, not a lambda (see the constructor). */
    private static final class RingsDone extends java.util.concurrent.atomic.AtomicInteger implements Runnable {
        private final RingMedium medium;

        RingsDone(RingMedium medium) {
            super(2);
            this.medium = medium;
        }

        @Override
        public void run() {
            if (decrementAndGet() == 0) medium.ringsDone();
        }
    }

    @Override
    public void resetOnClose() {
        reset = true;
    }

    @Override
    public long bytesSent() {
        return out.bytesSent();
    }

    @Override
    public long bytesReceived() {
        return in.bytesReceived();
    }

    @Override
    public String toString() {
        return path + " connection " + id;
    }
}
