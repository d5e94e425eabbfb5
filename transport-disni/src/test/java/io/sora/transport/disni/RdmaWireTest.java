package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.ConnectionKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class RdmaWireTest {
    private final ByteBuffer buf = ByteBuffer.allocateDirect(4 * RdmaWire.SLOT_SIZE);

    private RdmaWire.Message roundTrip(RdmaWire.Message m, int offset) throws ProtocolException {
        int len = RdmaWire.encode(m, buf, offset);
        assertTrue(len <= RdmaWire.SLOT_SIZE, "message fits a receive slot: " + len);
        assertFalse(RdmaWire.isCtrl(buf, offset, len));
        return RdmaWire.decode(buf, offset, len);
    }

    @Test
    void helloCarriesTheKeyAndTheClientRing() throws Exception {
        ConnectionKey key = new ConnectionKey(new InetSocketAddress(InetAddress.getByName("192.168.77.1"), 40563),
                new InetSocketAddress(InetAddress.getByName("fd00::5"), 65444));
        RdmaWire.Hello h = (RdmaWire.Hello) roundTrip(new RdmaWire.Hello(key, 0x7f00_1234_5678L, -5, 45056), 128);
        assertEquals(key, h.key());
        assertEquals(0x7f00_1234_5678L, h.ringAddress());
        assertEquals(-5, h.rkey());
        assertEquals(45056, h.ringSize());
    }

    @Test
    void offerCommitAndNoRoundTrip() throws Exception {
        byte[] secret = new byte[RdmaWire.SECRET_SIZE];
        for (int i = 0; i < secret.length; i++) secret[i] = (byte) (i * 17);
        RdmaWire.Offer o = (RdmaWire.Offer) roundTrip(new RdmaWire.Offer(99L, 7, 32768, secret, 42L), 0);
        assertEquals(99L, o.ringAddress());
        assertEquals(7, o.rkey());
        assertEquals(32768, o.ringSize());
        assertArrayEquals(secret, o.secret());
        assertEquals(42L, o.serverConnectionId());
        assertArrayEquals(secret, ((RdmaWire.Commit) roundTrip(new RdmaWire.Commit(secret), 256)).secret());
        assertEquals("client 10.0.0.9 not allowed", ((RdmaWire.No) roundTrip(new RdmaWire.No("client 10.0.0.9 not allowed"), 0)).reason());
    }

    @Test
    void longReasonsAreCutToFitASlot() throws Exception {
        String reason = "x".repeat(500);
        RdmaWire.No no = (RdmaWire.No) roundTrip(new RdmaWire.No(reason), 0);
        assertEquals(RdmaWire.MAX_REASON, no.reason().length());
    }

    @Test
    void ctrlMessagesAreRecognisedAndReadWithoutDecoding() {
        RdmaWire.encodeCtrl(buf, 128, 123_456_789_012L, 5, 98_765_432_101L);
        assertTrue(RdmaWire.isCtrl(buf, 128, RdmaWire.CTRL_SIZE));
        assertFalse(RdmaWire.isCtrl(buf, 128, RdmaWire.CTRL_SIZE + 1));
        assertEquals(123_456_789_012L, RdmaWire.ctrlConsumed(buf, 128));
        assertEquals(5, RdmaWire.ctrlFlags(buf, 128));
        assertEquals(98_765_432_101L, RdmaWire.ctrlReposted(buf, 128));
        assertTrue(RdmaWire.CTRL_SIZE <= QueuePair.MAX_INLINE, "CTRL is sent inline");
    }

    @Test
    void garbageIsRefusedWithTheReason() {
        buf.putInt(0, 0x12345678);
        ProtocolException e = assertThrows(ProtocolException.class, () -> RdmaWire.decode(buf, 0, 20));
        assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
        assertThrows(ProtocolException.class, () -> RdmaWire.decode(buf, 0, 3));
        RdmaWire.encodeCtrl(buf, 0, 1, 1, 1);
        assertThrows(ProtocolException.class, () -> RdmaWire.decode(buf, 0, RdmaWire.CTRL_SIZE), "CTRL is not a pairing message");
    }
}
