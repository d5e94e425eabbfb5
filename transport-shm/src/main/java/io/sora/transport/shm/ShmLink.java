package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.NativeSockets;
import io.sora.transport.Pairing;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;

/**
 * The shm side of one client's pairing request: its rendezvous channel and HELLO, and from the offer
 * on the segment and the server end's medium. The {@link Pairing} it belongs to keeps the state; the
 * doorbell thread tells it here of the client's COMMIT, or of the client leaving before it.
 */
final class ShmLink implements ShmMedium.CommitListener {
    final SocketChannel channel;
    final Wire.Hello hello;
    private final Tracer tracer;
    private volatile Pairing<ShmLink> pairing;
    private volatile long id;
    private volatile Segment segment;
    private volatile ShmMedium medium;
    /**
     * Whether the COMMIT is read off the channel here, by the accepting thread that claims the pairing
     * (or the listener's sweep when none does), instead of by the doorbell thread: where
     * {@link NativeSockets} can wait on the channel. The doorbell loop then takes the channel only
     * after the COMMIT. See {@link ShmServerBinding#awaitCommit}.
     */
    private final boolean direct;
    /** When the OFFER went out ({@link System#nanoTime}). */
    private volatile long offeredNanos;
    /** Serialises the reads before COMMIT: the claiming thread's and the sweep's. */
    private final Object commitLock = new Object();
    /** Threads claiming the pairing now (the sweep leaves the channel to them); guarded by {@link #commitLock}. */
    private int claimers;
    /** The doorbell loop has (or is about to have) the channel; guarded by {@link #commitLock}. */
    private boolean watched;

    /** The kept segment whose memory carried the request ({@link NextPairing}); null for a HELLO frame. */
    final Segment kept;
    /**
     * A kept segment's request taken by an accepting thread's catch-up, not by the doorbell thread after the
     * client's kick: said with the pairing ({@link NextPairing#BY_ACCEPT}), so the client's next connection
     * on that segment gives an accept time before it kicks ({@link KickDelay}).
     */
    boolean byAccept;

    ShmLink(SocketChannel channel, Wire.Hello hello, Tracer tracer) {
        this(channel, hello, tracer, null);
    }

    ShmLink(SocketChannel channel, Wire.Hello hello, Tracer tracer, Segment kept) {
        this.channel = channel;
        this.hello = hello;
        this.tracer = tracer;
        this.kept = kept;
        // a kept segment's pairing is committed by the thread that decides it (ShmServerBinding.offerKept): no
        // COMMIT is read off its channel, which the doorbell loop has already
        this.direct = kept == null && NativeSockets.fd(channel) >= 0;
    }

    /** The segment has no file (a kept one, unlinked at its first connection's COMMIT). */
    private volatile boolean noFile;

    /** The segment is created and mapped (or kept), the OFFER not yet sent. */
    void offering(Pairing<ShmLink> pairing, long id, Segment segment, ShmMedium medium, boolean kept) {
        this.noFile = kept;
        this.pairing = pairing;
        this.id = id;
        this.segment = segment;
        this.medium = medium;
        this.offeredNanos = System.nanoTime();
    }

    boolean direct() {
        return direct;
    }

    long offeredNanos() {
        return offeredNanos;
    }

    Pairing<ShmLink> pairing() {
        return pairing;
    }

    /** A thread starts ({@code +1}) or stops ({@code -1}) claiming: reading the COMMIT itself. */
    void claiming(int delta) {
        synchronized (commitLock) {
            claimers += delta;
        }
    }

    /** Threads claiming the pairing now. */
    int claimers() {
        synchronized (commitLock) {
            return claimers;
        }
    }

    /**
     * Reads the COMMIT (or the client's leaving) if it is there, without blocking; {@code bySweep}: only if
     * no thread claims the pairing. True once the pairing is no longer waiting for it; false while it is,
     * and before the offer (nothing can come before it).
     */
    boolean readCommit(boolean bySweep) {
        synchronized (commitLock) {
            if (watched || (bySweep && claimers > 0)) return false;
            ShmMedium m = medium;
            return m != null && m.readCommit();
        }
    }

    long id() {
        return id;
    }

    ShmMedium medium() {
        return medium;
    }

    @Override
    public void committed() {
        // Both sides have it mapped: the name can go, so nothing is left behind whatever happens next.
        // Done before the state changes, so whoever sees COMMITTED also sees the file gone.
        unlink();
        // read here, not by the doorbell thread: from now on it reads the bells and the end
        if (direct) watchByDoorbell();
        pairing.committed();
    }

    /**
     * Hands the channel to the doorbell loop (once; later calls do nothing): after a COMMIT read here,
     * or before it, for a claiming thread that cannot wait on the channel itself (a virtual thread),
     * which then waits for the doorbell thread to read the COMMIT, as where pairings are not direct.
     */
    void watchByDoorbell() {
        synchronized (commitLock) {
            if (watched) return;
            watched = true;
        }
        try {
            DoorbellLoop.get().register(channel, medium);
        } catch (IOException e) {
            // the JVM is shutting down: the connection works on, without its peer's end being watched
        }
    }

    @Override
    public void aborted(String why) {
        pairing.abort(why);
    }

    /** Unlinks the segment (if one was made) and drops the channel: the client sees EOF, or its control channel drop. */
    void release() {
        if (kept != null) NextPairing.refuse(kept, null); // a client waiting in the segment stops (no effect once paired)
        unlink();
        DoorbellLoop.get().close(channel); // out of the loop's watch first (if it was given it), then closed
    }

    private void unlink() {
        Segment s = segment;
        if (s == null || noFile) return;
        try {
            boolean removed = Files.deleteIfExists(s.path);
            if (removed && tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_UNLINK, id, "shm", null, s.path.toString());
            }
        } catch (IOException e) {
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_UNLINK, id, "shm", "unlink failed: " + e.getMessage(), s.path.toString());
            }
        }
    }
}
