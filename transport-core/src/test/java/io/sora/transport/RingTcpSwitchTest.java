package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A reader whose peer moved its bytes to TCP (docs/shm.md, "Buffering"), against a scripted medium: the
 * orders of the peer's switch and of its end that a reader may meet, and {@code available()} at the switch.
 */
class RingTcpSwitchTest {
    /** A ring of 16 bytes, full; the peer's switch and flags as the test sets them, or as a script plays them. */
    static final class Scripted implements RingMedium {
        volatile long switchedAt = -1;
        volatile int flags;
        /** Played at the reader's first look at the switch word, after that look: the writer's whole move. */
        volatile boolean switchRightAfterFirstLook;

        @Override public void setWaker(Waker w) { }
        @Override public int receiveCapacity() { return 16; }
        @Override public long producedByPeer() { return 16; }
        @Override public void readRing(int o, byte[] d, int off, int len) { java.util.Arrays.fill(d, off, off + len, (byte) 'r'); }
        @Override public void publishConsumed(long c) { }
        @Override public int sendCapacity() { return 16; }
        @Override public long consumedByPeer() { return 0; }
        @Override public void writeRing(int o, byte[] s, int off, int len) { }
        @Override public void publishProduced(long p) { }
        @Override public int peerFlags() { return flags; }
        @Override public void publishFlags(int f) { }
        @Override public void announceReaderWaiting(boolean w) { }
        @Override public void announceWriterWaiting(boolean w) { }
        @Override public void close() { }
        @Override public boolean carriesTcpSwitch() { return true; }

        @Override
        public long peerSwitchedAt() {
            long v = switchedAt;
            if (switchRightAfterFirstLook) {
                switchRightAfterFirstLook = false;
                switchedAt = 16;                         // the writer moves at byte 16,
                flags = RingMedium.OUTPUT_SHUTDOWN;      // writes its last bytes by TCP and shuts its output
            }
            return v;
        }
    }

    private static RingInputStream reader(Scripted m, String tcp) {
        RingInputStream in = new RingInputStream(m, new TestHooks(), 0);
        in.tcpFallback(new ByteArrayInputStream(tcp.getBytes(StandardCharsets.US_ASCII)));
        return in;
    }

    /**
     * The writer moved, wrote by TCP and shut its output down between the reader's look at the switch and its
     * look at the flags: the reader reads the TCP bytes, not the end. Before the fix it returned -1 for good
     * and the TCP bytes were lost (found in review, 2026-11-29).
     */
    @Test
    void aSwitchSeenOnlyWithThePeersEndStillLeadsToTheTcpBytes() throws Exception {
        Scripted m = new Scripted();
        RingInputStream in = reader(m, "from-tcp");
        byte[] b = new byte[64];
        assertEquals(16, in.read(b, 0, 64), "the ring's bytes");
        m.switchRightAfterFirstLook = true;
        int n = in.read(b, 0, 64);
        assertEquals("from-tcp", n < 0 ? "EOF" : new String(b, 0, n, StandardCharsets.US_ASCII), "after the switch");
        assertEquals(-1, in.read(b, 0, 64), "then TCP's end");
        assertEquals(true, in.onTcp());
    }

    /** At the switch, before any read went to TCP, available() says what TCP holds (it said 0 for ever before). */
    @Test
    void availableAtTheSwitchIsWhatTcpHolds() throws Exception {
        Scripted m = new Scripted();
        RingInputStream in = reader(m, "12345");
        byte[] b = new byte[64];
        assertEquals(16, in.read(b, 0, 64));
        assertEquals(0, in.available(), "nothing yet, no switch");
        m.switchedAt = 16;
        assertEquals(5, in.available(), "the TCP stream's bytes");
        assertEquals(5, in.read(b, 0, 64));
    }

    /** A switch at a byte the reader has not reached yet: the ring's bytes first, in order. */
    @Test
    void theRingIsReadUpToTheSwitchFirst() throws Exception {
        Scripted m = new Scripted();
        m.switchedAt = 16;
        RingInputStream in = reader(m, "tail");
        byte[] b = new byte[10];
        assertEquals(10, in.read(b, 0, 10));
        assertEquals(6, in.read(b, 0, 10), "the rest of the ring, not TCP's");
        assertEquals(4, in.read(b, 0, 10), "then TCP");
        assertEquals("tail", new String(b, 0, 4, StandardCharsets.US_ASCII));
    }
}
