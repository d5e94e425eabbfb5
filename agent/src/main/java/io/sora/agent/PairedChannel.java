package io.sora.agent;

import io.sora.transport.RingConnection;
import io.sora.transport.RingInputStream;
import io.sora.transport.RingMedium;
import io.sora.transport.RingOutputStream;
import java.io.IOException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Objects;

/**
 * A paired {@code SocketChannel}'s data path (docs/nio.md): channel reads and writes, heap or direct,
 * blocking or not, served from the rings; readiness for a selector, and its arming. Holds nothing that
 * reaches the channel (it is the value of a weak table keyed by the channel): the channel is passed
 * in by each call.
 *
 * <p>Threading as the channel's: one reader and one writer at a time, each for its whole call (this class's read and write locks), selector
 * calls on the selecting thread, {@link #wakeArmedSelector()} on the medium's thread.
 */
final class PairedChannel {
    final RingConnection connection;
    private final RingInputStream in;
    private final RingOutputStream out;
    private final RingMedium medium;
    /**
     * The selectors armed on this connection, each woken by the peer's publish: usually one, two when
     * the channel is registered with two selectors that wait at once (Tomcat's blocking writes wait on
     * a temporary selector while its poller holds the channel's key). A copy on every change (arms and
     * disarms, under this object's lock); read without the lock by {@link #wakeArmedSelector()}.
     */
    private volatile Selector[] armed = NO_SELECTORS;
    /** What each of {@link #armed} armed ({@code OP_READ}, {@code OP_WRITE}); under this object's lock. */
    private int[] armedOps = new int[0];
    private static final Selector[] NO_SELECTORS = new Selector[0];
    /**
     * One reader and one writer at a time for the whole call, as the JDK's own {@code readLock} and
     * {@code writeLock} make each call of a TCP channel: a gathering write's buffers are not interleaved
     * with another thread's write (the ring's own lock is taken per buffer), nor a scattering read's.
     */
    private final java.util.concurrent.locks.ReentrantLock readLock = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.locks.ReentrantLock writeLock = new java.util.concurrent.locks.ReentrantLock();

    PairedChannel(RingConnection connection) {
        this.connection = connection;
        this.in = connection.inputStream();
        this.out = connection.outputStream();
        this.medium = connection.medium();
        // Not kept for another connection unless every selector has let go of this one first, which a close
        // through Channels.closing does (ChannelSelection.release, which then allows it): a close that misses
        // it (a connect closed while pairing, a detach, a channel dropped unclosed) leaves a selector's late
        // arming able to write into the memory, so it is not kept (found in review, 2026-11-30)
        medium.neverKeep();
        connection.setReadinessListener(this::wakeArmedSelector);
    }

    String path() {
        return connection.path();
    }

    // ---------------------------------------------------------------- data

    int read(SocketChannel ch, ByteBuffer dst) throws IOException {
        readLock.lock();
        try {
            return readLocked(ch, dst);
        } finally {
            readLock.unlock();
        }
    }

    private int readLocked(SocketChannel ch, ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst);
        if (dst.isReadOnly()) throw new IllegalArgumentException("Read-only buffer");
        ensureOpen(ch);
        if (in.isShutdown()) return -1; // even for a buffer with no room, as the JDK's
        boolean blocking = ch.isBlocking();
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            int n = blocking ? in.read(dst, 0) : in.readNow(dst);
            done = true;
            return n;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    long read(SocketChannel ch, ByteBuffer[] dsts, int offset, int length) throws IOException {
        readLock.lock();
        try {
            return readLocked(ch, dsts, offset, length);
        } finally {
            readLock.unlock();
        }
    }

    private long readLocked(SocketChannel ch, ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        ensureOpen(ch);
        boolean blocking = ch.isBlocking();
        if (in.isShutdown()) return -1; // as the JDK's, before its buffers are looked at
        // every buffer checked before any byte moves, as the JDK's
        for (int i = offset; i < offset + length; i++) {
            if (dsts[i].isReadOnly()) throw new IllegalArgumentException("Read-only buffer");
        }
        long total = 0;
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            for (int i = offset; i < offset + length; i++) {
                ByteBuffer b = dsts[i];
                if (!b.hasRemaining()) continue;
                // only the first read may wait: the rest take what is there
                int n = blocking && total == 0 ? in.read(b, 0) : in.readNow(b);
                if (n < 0) return total == 0 ? -1 : total;
                total += n;
                if (b.hasRemaining()) break;
            }
            done = true;
            return total;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    int write(SocketChannel ch, ByteBuffer src) throws IOException {
        writeLock.lock();
        try {
            return writeLocked(ch, src);
        } finally {
            writeLock.unlock();
        }
    }

    private int writeLocked(SocketChannel ch, ByteBuffer src) throws IOException {
        Objects.requireNonNull(src);
        ensureWritable(ch);
        boolean blocking = ch.isBlocking();
        boolean done = false;
        int start = src.position();
        if (blocking) Interruptible.begin(ch);
        try {
            int n = out.write(src, blocking);
            done = true;
            return n;
        } catch (SocketException e) {
            // cut short (a close, the peer gone): the bytes taken count, as TCP's write returns them
            // (an interrupt still ends it with ClosedByInterruptException, from end)
            int taken = src.position() - start;
            if (taken > 0) {
                done = true;
                return taken;
            }
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    long write(SocketChannel ch, ByteBuffer[] srcs, int offset, int length) throws IOException {
        writeLock.lock();
        try {
            return writeLocked(ch, srcs, offset, length);
        } finally {
            writeLock.unlock();
        }
    }

    private long writeLocked(SocketChannel ch, ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        ensureWritable(ch);
        boolean blocking = ch.isBlocking();
        for (int i = offset; i < offset + length; i++) Objects.requireNonNull(srcs[i]); // before any byte goes, as the JDK's
        long total = 0;
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        ByteBuffer b = null;
        int start = 0;
        out.gathering(true); // one write, as over TCP, also after the peer's close
        try {
            for (int i = offset; i < offset + length; i++) {
                b = srcs[i];
                start = b.position();
                total += out.write(b, blocking);
                if (b.hasRemaining()) break; // non-blocking and the ring is full
            }
            done = true;
            return total;
        } catch (SocketException e) {
            // cut short: the bytes taken count, as in the single write
            long taken = total + (b == null ? 0 : b.position() - start);
            if (taken > 0) {
                done = true;
                return taken;
            }
            throw translate(ch, e);
        } finally {
            out.gathering(false);
            if (blocking) Interruptible.end(ch, done);
        }
    }

    /** The adaptor's input stream ({@code nanos}: its SO_TIMEOUT, 0 none). */
    int streamRead(SocketChannel ch, byte[] b, int off, int len, long nanos) throws IOException {
        readLock.lock();
        try {
            return streamReadLocked(ch, b, off, len, nanos);
        } finally {
            readLock.unlock();
        }
    }

    private int streamReadLocked(SocketChannel ch, byte[] b, int off, int len, long nanos) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) return 0; // before every other check, as the JDK's (closed or non-blocking: still 0)
        if (!ch.isBlocking()) throw new IllegalBlockingModeException();
        ensureOpen(ch);
        boolean done = false;
        Interruptible.begin(ch);
        try {
            int n = in.read(b, off, len, Math.max(0, nanos));
            done = true;
            return n;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            Interruptible.end(ch, done);
        }
    }

    /** The adaptor's output stream: every byte. */
    void streamWrite(SocketChannel ch, byte[] b, int off, int len) throws IOException {
        writeLock.lock();
        try {
            streamWriteLocked(ch, b, off, len);
        } finally {
            writeLock.unlock();
        }
    }

    private void streamWriteLocked(SocketChannel ch, byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) return; // before every other check, as the JDK's
        if (!ch.isBlocking()) throw new IllegalBlockingModeException();
        ensureWritable(ch);
        boolean done = false;
        Interruptible.begin(ch);
        try {
            out.write(b, off, len);
            done = true;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            Interruptible.end(ch, done);
        }
    }

    int available(SocketChannel ch) throws IOException {
        ensureOpen(ch);
        return in.available();
    }

    private static void ensureOpen(SocketChannel ch) throws ClosedChannelException {
        if (!ch.isOpen()) throw new ClosedChannelException();
    }

    private void ensureWritable(SocketChannel ch) throws ClosedChannelException {
        if (!ch.isOpen() || out.isShutdown()) throw new ClosedChannelException();
    }

    /** A close while the call was under way is the channel's AsynchronousCloseException, as on TCP. */
    private IOException translate(SocketChannel ch, SocketException e) {
        if (!ch.isOpen()) {
            AsynchronousCloseException a = new AsynchronousCloseException();
            a.initCause(e);
            return a;
        }
        if (out.isShutdown() && "Socket output is shutdown".equals(e.getMessage())) {
            ClosedChannelException c = new ClosedChannelException();
            c.initCause(e);
            return c;
        }
        return e;
    }

    // ---------------------------------------------------------------- readiness (ChannelSelection)

    /** Of {@code interest}, the ops ready now (level-triggered from the rings). */
    int ready(int interest) {
        int r = 0;
        if ((interest & SelectionKey.OP_READ) != 0 && in.readable()) r |= SelectionKey.OP_READ;
        if ((interest & SelectionKey.OP_WRITE) != 0 && out.writable()) r |= SelectionKey.OP_WRITE;
        return r;
    }

    private static final java.util.concurrent.atomic.AtomicLong BELL_IDS = new java.util.concurrent.atomic.AtomicLong();
    /** This connection's bell in a selector's own set of bells (ChannelSelection): never 0 (the set's wake-up). */
    final long bellId = BELL_IDS.incrementAndGet();
    /** The selection this connection's keys are registered through; told of the medium's wake-ups. */
    volatile ChannelSelection selection;

    /** The selector whose epoll set holds this connection's bell channel (ChannelSelection); changed under this object's lock. */
    volatile Selector direct;

    /** Whether the peer was told that this connection is read through a selector (see {@link ChannelSelection#selecting}). */
    private boolean readsThroughSelector;

    /** Whether the peer reads through a selector: its answers come through its event loop. */
    boolean peerReadsThroughSelector() {
        return medium.peerReadsThroughSelector();
    }

    /** As the selecting thread on {@code cpu} starts to wait: see {@link io.sora.transport.RingMedium#peerPlacement}. */
    int peerPlacement(int cpu) {
        return medium.peerPlacement(cpu);
    }

    /** The medium's bell channel (null: none), for a selector to poll itself. */
    java.nio.channels.SelectableChannel bellChannel() {
        return medium.bellChannel();
    }

    /** Runs {@code action} while the bell channel cannot close ({@link io.sora.transport.RingMedium#whileBellOpen}). */
    int whileBellOpen(java.util.function.IntSupplier action) {
        return medium.whileBellOpen(action);
    }

    /**
     * Arms the rings for {@code interest} on behalf of {@code selector} (each arm a full fence, even where
     * another selector armed the same direction: the caller's re-check must come after it); the caller
     * re-checks {@link #ready} afterwards, then blocks.
     */
    synchronized void arm(Selector selector, int interest) {
        int ops = interest & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        if (ops == 0 || released) return;
        int i = indexOf(selector);
        if (i < 0) {
            i = armed.length;
            Selector[] s = java.util.Arrays.copyOf(armed, i + 1);
            s[i] = selector;
            armedOps = java.util.Arrays.copyOf(armedOps, i + 1);
            armed = s;
        }
        armedOps[i] |= ops;
        if ((ops & SelectionKey.OP_READ) != 0) {
            // told at the first wait for reading through a selector, not at registration: a selector
            // used only to connect, or a temporary one, must not mark a channel read with streams
            if (!readsThroughSelector) {
                readsThroughSelector = true;
                medium.markReadsThroughSelector();
            }
            medium.armReaderWaker(true);
        }
        if ((ops & SelectionKey.OP_WRITE) != 0) medium.armWriterWaker(true);
    }

    /**
     * Disarms what {@code selector} armed; true if it had armed anything (then the peer may have rung the
     * bell). A direction another selector still waits for stays armed.
     */
    synchronized boolean disarm(Selector selector) {
        int i = indexOf(selector);
        if (i < 0) return false;
        int ops = armedOps[i];
        int n = armed.length;
        Selector[] s = new Selector[n - 1];
        int[] o = new int[n - 1];
        System.arraycopy(armed, 0, s, 0, i);
        System.arraycopy(armed, i + 1, s, i, n - 1 - i);
        System.arraycopy(armedOps, 0, o, 0, i);
        System.arraycopy(armedOps, i + 1, o, i, n - 1 - i);
        armedOps = o;
        armed = n == 1 ? NO_SELECTORS : s;
        int stillArmed = 0; // what the other selectors still wait for
        for (int op : o) stillArmed |= op;
        int released = ops & ~stillArmed;
        if ((released & SelectionKey.OP_READ) != 0) medium.armReaderWaker(false);
        if ((released & SelectionKey.OP_WRITE) != 0) medium.armWriterWaker(false);
        return ops != 0;
    }

    /**
     * Set (under this object's lock) as the channel closes, before its medium does ({@link ChannelSelection#release}):
     * no selector arms the connection, reads its bells or moves them any more, for its segment and control
     * channel may be kept for another connection (a selector's late arm there would be that connection's
     * lost wake-up). Written under this object's lock; volatile for the selector's look before it (its poll).
     */
    volatile boolean released;

    /** See {@link io.sora.transport.RingMedium#allowKeep}: only once released. */
    void allowKeep() {
        medium.allowKeep();
    }

    /** The selectors armed on this connection now (under this object's lock). */
    Selector[] armedSelectors() {
        return armed.clone();
    }

    /** Whether a selector other than {@code selector} is armed on this connection now. */
    boolean armedElsewhere(Selector selector) {
        Selector[] s = armed;
        return s.length > 1 || (s.length == 1 && s[0] != selector);
    }

    private int indexOf(Selector selector) {
        Selector[] s = armed;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == selector) return i;
        }
        return -1;
    }

    private java.nio.ByteBuffer bellScratch;

    /** Tells the medium's own thread to leave the bells to a selector ({@code mute}) or to read them again. */
    void muteBell(boolean mute, io.sora.transport.RingMedium.BellControl control) {
        medium.muteBell(mute, control);
    }

    /** Whether the bells are left to a selector (the medium's state: a thread sleeping for a bell unmutes). */
    boolean bellMuted() {
        return medium.bellMuted();
    }

    /** Reads the bells waiting for this selector (see {@link io.sora.transport.RingMedium#drainBell}). */
    void drainBell() {
        // direct: the JDK reads a heap buffer through a temporary direct one and copies it over
        if (bellScratch == null) bellScratch = java.nio.ByteBuffer.allocateDirect(64);
        medium.drainBell(bellScratch);
    }

    /**
     * The medium woke this connection (the peer published, or went), or this side shut a direction
     * down: every armed selector wakes.
     */
    void wakeArmedSelector() {
        ChannelSelection sel = selection;
        for (Selector s : armed) {
            if (sel != null) sel.woke(s, this); // a sleeping key of that selector is looked at again
            ChannelSelection.wakeInternally(s);
        }
    }
}
