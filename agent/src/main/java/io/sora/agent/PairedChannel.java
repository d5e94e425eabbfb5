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
 * <p>Threading as the channel's: one reader and one writer at a time (the engines' locks), selector
 * calls on the selecting thread, {@link #wakeArmedSelector()} on the medium's thread.
 */
final class PairedChannel {
    final RingConnection connection;
    private final RingInputStream in;
    private final RingOutputStream out;
    private final RingMedium medium;
    /** The selector armed on this connection, woken by the peer's publish; null when none is. */
    private volatile Selector armed;
    private int armedOps; // the selecting thread's

    PairedChannel(RingConnection connection) {
        this.connection = connection;
        this.in = connection.inputStream();
        this.out = connection.outputStream();
        this.medium = connection.medium();
        connection.setReadinessListener(this::wakeArmedSelector);
    }

    String path() {
        return connection.path();
    }

    // ---------------------------------------------------------------- data

    int read(SocketChannel ch, ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst);
        if (dst.isReadOnly()) throw new IllegalArgumentException("Read-only buffer");
        ensureOpen(ch);
        boolean blocking = ch.isBlocking();
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            int n = in.read(dst, blocking ? 0 : RingInputStream.NO_WAIT);
            done = true;
            return n;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    long read(SocketChannel ch, ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        ensureOpen(ch);
        boolean blocking = ch.isBlocking();
        long total = 0;
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            for (int i = offset; i < offset + length; i++) {
                ByteBuffer b = dsts[i];
                if (b.isReadOnly()) throw new IllegalArgumentException("Read-only buffer");
                if (!b.hasRemaining()) continue;
                // only the first read may wait: the rest take what is there
                int n = in.read(b, blocking && total == 0 ? 0 : RingInputStream.NO_WAIT);
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
        Objects.requireNonNull(src);
        ensureWritable(ch);
        boolean blocking = ch.isBlocking();
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            int n = out.write(src, blocking);
            done = true;
            return n;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    long write(SocketChannel ch, ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        ensureWritable(ch);
        boolean blocking = ch.isBlocking();
        long total = 0;
        boolean done = false;
        if (blocking) Interruptible.begin(ch);
        try {
            for (int i = offset; i < offset + length; i++) {
                ByteBuffer b = srcs[i];
                total += out.write(b, blocking);
                if (b.hasRemaining()) break; // non-blocking and the ring is full
            }
            done = true;
            return total;
        } catch (SocketException e) {
            throw translate(ch, e);
        } finally {
            if (blocking) Interruptible.end(ch, done);
        }
    }

    /** The adaptor's input stream ({@code nanos}: its SO_TIMEOUT, 0 none). */
    int streamRead(SocketChannel ch, byte[] b, int off, int len, long nanos) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (!ch.isBlocking()) throw new IllegalBlockingModeException();
        if (len == 0) return 0;
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
        Objects.checkFromIndexSize(off, len, b.length);
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

    /** The selector whose epoll set holds this connection's bell channel (ChannelSelection); the selecting thread's. */
    Selector direct;

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

    /**
     * Arms the rings for {@code interest} on behalf of {@code selector} (each arm a full fence); the
     * caller re-checks {@link #ready} afterwards, then blocks.
     */
    void arm(Selector selector, int interest) {
        armed = selector;
        int ops = interest & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
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
        armedOps |= ops;
    }

    /** Disarms; true if it was armed (then the peer may have rung the bell). */
    boolean disarm() {
        if (armedOps == 0) return false;
        if ((armedOps & SelectionKey.OP_READ) != 0) medium.armReaderWaker(false);
        if ((armedOps & SelectionKey.OP_WRITE) != 0) medium.armWriterWaker(false);
        armedOps = 0;
        armed = null;
        return true;
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
        if (bellScratch == null) bellScratch = java.nio.ByteBuffer.allocate(64);
        medium.drainBell(bellScratch);
    }

    /** The medium woke this connection (the peer published, or went): an armed selector wakes. */
    private void wakeArmedSelector() {
        Selector s = armed;
        if (s != null) s.wakeup();
    }
}
