package io.sora.transport.shm;

import static io.sora.transport.shm.Segment.INTS;
import static io.sora.transport.shm.Segment.LONGS;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.RingMedium;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The shm {@link RingMedium}: rings, cursors and flags in a mapped {@link Segment}, doorbells and
 * liveness on the Unix-domain control channel. Cursors and flags use acquire/release (and a full
 * fence around the "waiting" announcements); data moves with absolute bulk get/put, so nothing on the
 * data path allocates.
 *
 * <p>A doorbell (one byte) is sent only when the peer announced it is about to sleep. Doorbells go
 * out on a non-blocking channel: if the socket buffer is full, the peer already has unread doorbells
 * and will wake anyway, so a short write loses nothing. EOF on the channel means the peer is gone:
 * closed if its CLOSED flag is set, otherwise dead ({@link #DEAD}).
 */
final class ShmMedium implements RingMedium, DoorbellLoop.Handler {
    /** Server side, before COMMIT: told when the client commits or gives up. */
    interface CommitListener {
        void committed();

        void aborted(String reason);
    }

    private final long id;
    private final MappedByteBuffer buf;
    private final SocketChannel channel;
    private final Tracer tracer;
    private final int recvBase;
    private final int recvCapacity;
    private final int sendBase;
    private final int sendCapacity;
    private final int offPeerProduced;
    private final int offMyConsumed;
    private final int offMyProduced;
    private final int offPeerConsumed;
    private final int offMyState;
    private final int offPeerState;
    private final ByteBuffer readerBell = ByteBuffer.allocateDirect(1);
    private final ByteBuffer writerBell = ByteBuffer.allocateDirect(1);
    private final ByteBuffer commitFrame = ByteBuffer.allocate(Wire.COMMIT_FRAME_SIZE);
    private volatile CommitListener commitListener;
    private volatile Waker waker;
    private volatile boolean peerDead;
    private volatile boolean closed;

    /**
     * @param server         which end this is
     * @param commitListener server only: waits for COMMIT first; null on the client
     */
    ShmMedium(long id, Segment segment, boolean server, SocketChannel channel, Tracer tracer,
              CommitListener commitListener) {
        this.id = id;
        this.buf = segment.buffer;
        this.channel = channel;
        this.tracer = tracer;
        this.commitListener = commitListener;
        int c2s = Segment.HEADER_SIZE;
        int s2c = Segment.HEADER_SIZE + segment.ringC2S;
        if (server) {
            recvBase = c2s;
            recvCapacity = segment.ringC2S;
            sendBase = s2c;
            sendCapacity = segment.ringS2C;
            offPeerProduced = Segment.OFF_C2S_PRODUCED;
            offMyConsumed = Segment.OFF_C2S_CONSUMED;
            offMyProduced = Segment.OFF_S2C_PRODUCED;
            offPeerConsumed = Segment.OFF_S2C_CONSUMED;
            offMyState = Segment.OFF_SERVER_STATE;
            offPeerState = Segment.OFF_CLIENT_STATE;
        } else {
            recvBase = s2c;
            recvCapacity = segment.ringS2C;
            sendBase = c2s;
            sendCapacity = segment.ringC2S;
            offPeerProduced = Segment.OFF_S2C_PRODUCED;
            offMyConsumed = Segment.OFF_S2C_CONSUMED;
            offMyProduced = Segment.OFF_C2S_PRODUCED;
            offPeerConsumed = Segment.OFF_C2S_CONSUMED;
            offMyState = Segment.OFF_CLIENT_STATE;
            offPeerState = Segment.OFF_SERVER_STATE;
        }
    }

    SocketChannel channel() {
        return channel;
    }

    @Override
    public void setWaker(Waker waker) {
        this.waker = waker;
    }

    @Override
    public int receiveCapacity() {
        return recvCapacity;
    }

    @Override
    public long producedByPeer() {
        return (long) LONGS.getAcquire(buf, offPeerProduced);
    }

    @Override
    public void readRing(int ringOffset, byte[] dst, int dstOffset, int len) {
        buf.get(recvBase + ringOffset, dst, dstOffset, len);
    }

    @Override
    public void publishConsumed(long consumed) {
        LONGS.setRelease(buf, offMyConsumed, consumed);
        VarHandle.fullFence();
        if ((int) INTS.getVolatile(buf, offPeerState + Segment.WRITER_WAITING) != 0) ring(readerBell);
    }

    @Override
    public int sendCapacity() {
        return sendCapacity;
    }

    @Override
    public long consumedByPeer() {
        return (long) LONGS.getAcquire(buf, offPeerConsumed);
    }

    @Override
    public void writeRing(int ringOffset, byte[] src, int srcOffset, int len) {
        buf.put(sendBase + ringOffset, src, srcOffset, len);
    }

    @Override
    public void publishProduced(long produced) {
        LONGS.setRelease(buf, offMyProduced, produced);
        VarHandle.fullFence();
        if ((int) INTS.getVolatile(buf, offPeerState + Segment.READER_WAITING) != 0) ring(writerBell);
    }

    @Override
    public int peerFlags() {
        return (int) INTS.getAcquire(buf, offPeerState + Segment.FLAGS) | (peerDead ? DEAD : 0);
    }

    @Override
    public void publishFlags(int flags) {
        INTS.getAndBitwiseOr(buf, offMyState + Segment.FLAGS, flags & (OUTPUT_SHUTDOWN | INPUT_SHUTDOWN | CLOSED));
        VarHandle.fullFence();
        // Rare (half-close, close): a fresh buffer keeps this callable from any thread without
        // sharing the data-path bells.
        ring(ByteBuffer.allocate(1));
    }

    @Override
    public void announceReaderWaiting(boolean waiting) {
        INTS.setVolatile(buf, offMyState + Segment.READER_WAITING, waiting ? 1 : 0);
        VarHandle.fullFence();
    }

    @Override
    public void announceWriterWaiting(boolean waiting) {
        INTS.setVolatile(buf, offMyState + Segment.WRITER_WAITING, waiting ? 1 : 0);
        VarHandle.fullFence();
    }

    private void ring(ByteBuffer bell) {
        if (closed) return;
        try {
            bell.clear();
            channel.write(bell);
        } catch (IOException e) {
            // The peer is gone or we closed: the EOF path (or our own close) reports it.
        }
    }

    /** Doorbell-thread side: doorbells wake both local threads; EOF marks the peer gone. */
    @Override
    public boolean onReadable(SocketChannel ch, ByteBuffer scratch) {
        if (closed) return false; // our own close: nothing to report
        int n;
        try {
            n = ch.read(scratch);
        } catch (IOException e) {
            n = -1;
        }
        CommitListener pending = commitListener;
        if (pending != null) return onPreCommit(pending, scratch, n);
        if (n >= 0) {
            if (n > 0) wakeBoth();
            return true;
        }
        peerGone();
        return false;
    }

    private boolean onPreCommit(CommitListener pending, ByteBuffer scratch, int n) {
        if (n < 0) {
            commitListener = null;
            pending.aborted("client closed the rendezvous before COMMIT");
            return false;
        }
        scratch.flip();
        while (scratch.hasRemaining() && commitFrame.hasRemaining()) commitFrame.put(scratch.get());
        if (commitFrame.hasRemaining()) return true;
        commitListener = null;
        try {
            if (Wire.tryDecode(commitFrame) instanceof Wire.Commit) {
                pending.committed();
                wakeBoth();
                return true;
            }
            pending.aborted("expected COMMIT from the client, got another message");
        } catch (IOException e) {
            pending.aborted("bad COMMIT from the client: " + e.getMessage());
        }
        return false;
    }

    private void peerGone() {
        boolean gracefully = ((int) INTS.getAcquire(buf, offPeerState + Segment.FLAGS) & CLOSED) != 0;
        if (!gracefully) peerDead = true;
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_PEER_CLOSED, id, "shm",
                    gracefully ? "peer closed" : "peer died: control channel EOF without close", null);
        }
        wakeBoth();
        closeChannel();
    }

    private void wakeBoth() {
        Waker w = waker;
        if (w != null) {
            w.wakeReader();
            w.wakeWriter();
        }
    }

    /** Drops the control channel abruptly, as a dying process would (tests simulate peer death with it). */
    void closeChannel() {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to release
        }
        DoorbellLoop.get().wakeup();
    }

    /**
     * Shuts the control channel (the peer sees EOF at once, with our CLOSED flag already set). The
     * mapping is left to the garbage collector: a thread still returning from a read may touch it,
     * and unmapping under it would crash the JVM. The file is already unlinked.
     */
    @Override
    public void close() {
        closed = true;
        try {
            channel.shutdownOutput();
        } catch (IOException e) {
            // already closed or the peer is gone
        }
        closeChannel();
    }
}
