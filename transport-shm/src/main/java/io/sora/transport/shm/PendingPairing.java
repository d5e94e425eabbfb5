package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.ConnectionKey;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.util.function.Consumer;

/**
 * Server side of one pairing between the client's HELLO and the application's {@code accept()}:
 * HELLO received, then OFFERED (segment created and mapped), then COMMITTED (segment unlinked; the
 * connection waits to be claimed) or ABORTED (everything released; the connection is TCP's).
 * Thread-safe: the rendezvous thread, the doorbell thread and the accepting thread all touch it.
 */
final class PendingPairing implements ShmMedium.CommitListener {
    enum State { HELLO, OFFERED, COMMITTED, ABORTED }

    final long id;
    final ConnectionKey key;
    final SocketChannel channel;
    private final Tracer tracer;
    private final Consumer<PendingPairing> onAbort;
    private Segment segment;
    private ShmMedium medium;
    private State state = State.HELLO;
    private String reason;

    PendingPairing(long id, ConnectionKey key, SocketChannel channel, Tracer tracer, Consumer<PendingPairing> onAbort) {
        this.id = id;
        this.key = key;
        this.channel = channel;
        this.tracer = tracer;
        this.onAbort = onAbort;
    }

    /** The segment is mapped and the OFFER is about to go out; false if aborted meanwhile. */
    synchronized boolean offered(Segment segment, ShmMedium medium) {
        this.segment = segment;
        this.medium = medium;
        if (state != State.HELLO) return false;
        state = State.OFFERED;
        return true;
    }

    @Override
    public synchronized void committed() {
        if (state != State.OFFERED) return;
        // Both sides have it mapped: the name can go, so nothing is left behind whatever happens next.
        // Done before the state changes, so whoever sees COMMITTED also sees the file gone.
        unlink();
        state = State.COMMITTED;
        notifyAll();
    }

    @Override
    public synchronized void aborted(String why) {
        if (state == State.COMMITTED || state == State.ABORTED) return;
        if (segment != null) unlink();
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to release
        }
        DoorbellLoop.get().wakeup();
        reason = why;
        onAbort.accept(this);
        state = State.ABORTED;
        notifyAll();
    }

    private void unlink() {
        try {
            boolean removed = Files.deleteIfExists(segment.path);
            if (removed && tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_UNLINK, id, "shm", null, segment.path.toString());
            }
        } catch (IOException e) {
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_UNLINK, id, "shm", "unlink failed: " + e.getMessage(), segment.path.toString());
            }
        }
    }

    /** Waits until COMMITTED or ABORTED, at most {@code nanos}; returns the state then. */
    synchronized State await(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (state == State.HELLO || state == State.OFFERED) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            wait(Math.max(1, left / 1_000_000L));
        }
        return state;
    }

    synchronized State state() {
        return state;
    }

    synchronized String reason() {
        return reason;
    }

    synchronized ShmMedium medium() {
        return medium;
    }
}
