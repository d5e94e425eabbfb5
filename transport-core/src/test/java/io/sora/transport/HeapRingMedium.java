package io.sora.transport;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** An in-memory medium: two heap rings shared by two ends in one JVM, wake-ups by direct calls. */
final class HeapRingMedium implements RingMedium {
    /** One direction: a ring, its cursors, and the reader's "sleeping" announcement. */
    private static final class Ring {
        final byte[] bytes;
        final AtomicLong produced = new AtomicLong();
        final AtomicLong consumed = new AtomicLong();
        final AtomicInteger readerWaiting = new AtomicInteger();
        final AtomicInteger writerWaiting = new AtomicInteger();
        /** The writer's last skip ({@link RingMedium#publishSkipTo}), how many, and the furthest ring offset written. */
        final AtomicLong skipTo = new AtomicLong();
        final AtomicInteger skips = new AtomicInteger();
        final AtomicInteger furthestWritten = new AtomicInteger();

        Ring(int size) {
            bytes = new byte[size];
        }
    }

    private final Ring in;
    private final Ring out;
    private final AtomicInteger myFlags = new AtomicInteger();
    private HeapRingMedium peer;
    /** Both ends' {@link #keepWithin} (0: no skips, the default). */
    private int keepWithin;
    private volatile Waker waker;
    private volatile boolean peerDead;
    final AtomicInteger closeCalls = new AtomicInteger();
    /** What this end published with {@link #publishCpu}; -1 while nothing. */
    volatile int publishedCpu = -1;

    private HeapRingMedium(Ring in, Ring out) {
        this.in = in;
        this.out = out;
    }

    /** A connected pair: [0] receives what [1] sends and vice versa. */
    static HeapRingMedium[] pair(int ringOfFirst, int ringOfSecond) {
        Ring a = new Ring(ringOfFirst);
        Ring b = new Ring(ringOfSecond);
        HeapRingMedium first = new HeapRingMedium(a, b);
        HeapRingMedium second = new HeapRingMedium(b, a);
        first.peer = second;
        second.peer = first;
        return new HeapRingMedium[] {first, second};
    }

    /** A connected pair whose writers keep to the first {@code keepWithin} bytes of their rings while the reader keeps up. */
    static HeapRingMedium[] pair(int ringOfFirst, int ringOfSecond, int keepWithin) {
        HeapRingMedium[] p = pair(ringOfFirst, ringOfSecond);
        p[0].keepWithin = keepWithin;
        p[1].keepWithin = keepWithin;
        return p;
    }

    /** Skips this end's writer made so far. */
    int skips() {
        return out.skips.get();
    }

    /** The furthest ring offset (exclusive) this end's writer wrote to. */
    int furthestWritten() {
        return out.furthestWritten.get();
    }

    @Override
    public int keepWithin() {
        return keepWithin;
    }

    @Override
    public void publishSkipTo(long to) {
        out.skipTo.set(to);
        out.skips.incrementAndGet();
    }

    @Override
    public long peerSkipTo() {
        return in.skipTo.get();
    }

    @Override
    public boolean peerMaySkip() {
        return keepWithin > 0;
    }

    /** Simulates the peer's process dying: no flags, just gone. */
    void peerDied() {
        peerDead = true;
        Waker w = waker;
        if (w != null) {
            w.wakeReader();
            w.wakeWriter();
        }
    }

    @Override public void setWaker(Waker waker) { this.waker = waker; }
    @Override public int receiveCapacity() { return in.bytes.length; }
    @Override public long producedByPeer() { return in.produced.get(); }

    @Override
    public void readRing(int ringOffset, byte[] dst, int dstOffset, int len) {
        System.arraycopy(in.bytes, ringOffset, dst, dstOffset, len);
    }

    @Override
    public void publishConsumed(long consumed) {
        in.consumed.set(consumed);
        VarHandle.fullFence();
        if (in.writerWaiting.get() != 0) peer.wakeWriter();
    }

    @Override public int sendCapacity() { return out.bytes.length; }
    @Override public long consumedByPeer() { return out.consumed.get(); }

    @Override
    public void writeRing(int ringOffset, byte[] src, int srcOffset, int len) {
        System.arraycopy(src, srcOffset, out.bytes, ringOffset, len);
        out.furthestWritten.accumulateAndGet(ringOffset + len, Math::max);
    }

    @Override
    public void publishProduced(long produced) {
        out.produced.set(produced);
        VarHandle.fullFence();
        if (out.readerWaiting.get() != 0) peer.wakeReader();
    }

    @Override
    public void publishCpu(int cpu) {
        publishedCpu = cpu;
    }

    @Override
    public int peerCpu() {
        return peer.publishedCpu;
    }

    @Override
    public int peerFlags() {
        return peer.myFlags.get() | (peerDead ? DEAD : 0);
    }

    @Override
    public void publishFlags(int flags) {
        myFlags.getAndUpdate(f -> f | flags);
        VarHandle.fullFence();
        peer.wakeReader();
        peer.wakeWriter();
    }

    @Override
    public void announceReaderWaiting(boolean waiting) {
        in.readerWaiting.set(waiting ? 1 : 0);
        VarHandle.fullFence();
    }

    @Override
    public void announceWriterWaiting(boolean waiting) {
        out.writerWaiting.set(waiting ? 1 : 0);
        VarHandle.fullFence();
    }

    @Override
    public void close() {
        closeCalls.incrementAndGet();
    }

    private void wakeReader() {
        Waker w = waker;
        if (w != null) w.wakeReader();
    }

    private void wakeWriter() {
        Waker w = waker;
        if (w != null) w.wakeWriter();
    }
}
