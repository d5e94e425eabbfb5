package io.sora.transport;

/**
 * A medium for tests that script one side: 16-byte rings, the bytes read filled with 'p', writes dropped,
 * nothing published, no flags; the peer's cursors as {@link #produced} and {@link #consumed} say (the
 * send ring stays full while {@code consumed} is 0). Subclasses override what their test plays.
 */
abstract class ScriptedMedium implements RingMedium {
    volatile long produced;
    volatile long consumed;
    volatile Waker waker;

    @Override public void setWaker(Waker w) { waker = w; }
    @Override public int receiveCapacity() { return 16; }
    @Override public long producedByPeer() { return produced; }
    @Override public void readRing(int o, byte[] d, int off, int len) { java.util.Arrays.fill(d, off, off + len, (byte) 'p'); }
    @Override public void publishConsumed(long c) { }
    @Override public int sendCapacity() { return 16; }
    @Override public long consumedByPeer() { return consumed; }
    @Override public void writeRing(int o, byte[] s, int off, int len) { }
    @Override public void publishProduced(long p) { }
    @Override public int peerFlags() { return 0; }
    @Override public void publishFlags(int f) { }
    @Override public void announceReaderWaiting(boolean w) { }
    @Override public void announceWriterWaiting(boolean w) { }
    @Override public void close() { }

    /** The peer writes {@code n} bytes: a reader here is woken. */
    void deliver(int n) {
        produced += n;
        waker.wakeReader();
    }
}
