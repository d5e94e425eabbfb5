package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
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

    ShmLink(SocketChannel channel, Wire.Hello hello, Tracer tracer) {
        this.channel = channel;
        this.hello = hello;
        this.tracer = tracer;
    }

    /** The segment is created and mapped, the OFFER not yet sent. */
    void offering(Pairing<ShmLink> pairing, long id, Segment segment, ShmMedium medium) {
        this.pairing = pairing;
        this.id = id;
        this.segment = segment;
        this.medium = medium;
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
        pairing.committed();
    }

    @Override
    public void aborted(String why) {
        pairing.abort(why);
    }

    /** Unlinks the segment (if one was made) and drops the channel: the client sees EOF, or its control channel drop. */
    void release() {
        unlink();
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to release
        }
        DoorbellLoop.get().wakeup();
    }

    private void unlink() {
        Segment s = segment;
        if (s == null) return;
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
