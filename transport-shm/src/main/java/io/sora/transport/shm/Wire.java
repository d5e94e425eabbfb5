package io.sora.transport.shm;

import io.sora.transport.ConnectionKey;
import io.sora.transport.WireAddresses;
import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The pairing messages on the rendezvous socket. Every frame is
 * {@code u16 length | u32 magic "SORA" | u16 version | u8 type | body}, big-endian, where length
 * counts the bytes after itself.
 *
 * <pre>
 * HELLO  (1) client address, server address, i32 client receive ring size
 *            (an address is u8 length 4|16, the address bytes, u16 port)
 * OFFER  (2) u16 n, n bytes UTF-8 segment path, 16 bytes secret, i32 c2s ring, i32 s2c ring,
 *            i64 server connection id (for trace correlation)
 * NO     (3) u16 n, n bytes UTF-8 reason
 * COMMIT (4) empty
 * ANNOUNCE (5) empty: sent before the client's TCP connect (see {@link io.sora.transport.Announcement})
 * NOTED  (6) empty: the server's answer to ANNOUNCE (clients of today skip it; older ones waited for it)
 * (7)        reserved: REOFFER, which answered a HELLO on a kept channel until the next connection on a
 *            kept segment was agreed in its memory ({@link NextPairing})
 * </pre>
 * A client sends ANNOUNCE, connects over TCP at once, then sends HELLO on the same socket
 * (or HELLO alone on a fresh socket: the server pairs it only if it arrives before accept() decided).
 * After COMMIT the socket carries only one-byte doorbells ({@link #BELL}) until it is closed; where both
 * ends keep it after the connection closed (see {@link ShmMedium}, "Kept for the next connection"), the
 * next connection between the two processes is agreed in the segment ({@link NextPairing}), and the
 * client's one byte on the idle channel asks the server to look at it.
 * ANNOUNCE and NOTED were added within version 1: a listener that predates them drops the channel on
 * ANNOUNCE, and the client then falls back to TCP.
 */
final class Wire {
    static final int MAGIC = 0x534F5241; // "SORA"
    static final int VERSION = 1;
    static final int MAX_FRAME = 4096;
    private static final byte HELLO = 1;
    private static final byte OFFER = 2;
    private static final byte NO = 3;
    private static final byte COMMIT = 4;
    private static final byte ANNOUNCE = 5;
    private static final byte NOTED = 6;
    /** A doorbell on a committed channel. */
    static final byte BELL = 0;
    private static final int PREAMBLE = 4 + 2 + 1;
    /** The whole COMMIT frame length, which the server parses byte by byte. */
    static final int COMMIT_FRAME_SIZE = 2 + PREAMBLE;

    private Wire() {
    }

    sealed interface Message permits Hello, Offer, No, Commit, Announce, Noted {}

    record Hello(ConnectionKey key, int receiveRing) implements Message {}

    record Offer(String segmentPath, byte[] secret, int ringC2S, int ringS2C, long serverConnectionId)
            implements Message {}

    record No(String reason) implements Message {}

    record Commit() implements Message {}

    record Announce() implements Message {}

    record Noted() implements Message {}

    /** Encodes a frame, ready to write (position 0, limit at its end). */
    static ByteBuffer encode(Message m) {
        ByteBuffer b = ByteBuffer.allocate(MAX_FRAME);
        b.position(2);
        b.putInt(MAGIC).putShort((short) VERSION);
        if (m instanceof Hello h) {
            b.put(HELLO);
            WireAddresses.put(b, h.key().client());
            WireAddresses.put(b, h.key().server());
            b.putInt(h.receiveRing());
        } else if (m instanceof Offer o) {
            b.put(OFFER);
            putString(b, o.segmentPath());
            b.put(o.secret()).putInt(o.ringC2S()).putInt(o.ringS2C()).putLong(o.serverConnectionId());
        } else if (m instanceof No n) {
            b.put(NO);
            putString(b, n.reason());
        } else if (m instanceof Announce) {
            b.put(ANNOUNCE);
        } else if (m instanceof Noted) {
            b.put(NOTED);
        } else {
            b.put(COMMIT);
        }
        b.putShort(0, (short) (b.position() - 2));
        return b.flip();
    }

    /**
     * Takes one complete frame from {@code acc} (a buffer being filled: position = bytes held) and
     * compacts the rest; returns null while the frame is incomplete.
     */
    static Message tryDecode(ByteBuffer acc) throws ProtocolException {
        if (acc.position() < 2) return null;
        int len = acc.getShort(0) & 0xffff;
        if (len < PREAMBLE || len > MAX_FRAME - 2) throw new ProtocolException("bad frame length " + len);
        if (acc.position() < 2 + len) return null;
        ByteBuffer frame = acc.duplicate().position(2).limit(2 + len).slice();
        Message m = decode(frame);
        acc.flip().position(2 + len);
        acc.compact();
        return m;
    }

    private static Message decode(ByteBuffer f) throws ProtocolException {
        try {
            int magic = f.getInt();
            if (magic != MAGIC) throw new ProtocolException("bad magic 0x" + Integer.toHexString(magic));
            int version = f.getShort() & 0xffff;
            if (version != VERSION) throw new ProtocolException("unsupported version " + version + ", expected " + VERSION);
            byte type = f.get();
            Message m;
            switch (type) {
                case HELLO -> m = new Hello(new ConnectionKey(WireAddresses.get(f), WireAddresses.get(f)), f.getInt());
                case OFFER -> {
                    String path = getString(f);
                    byte[] secret = new byte[Segment.SECRET_SIZE];
                    f.get(secret);
                    m = new Offer(path, secret, f.getInt(), f.getInt(), f.getLong());
                }
                case NO -> m = new No(getString(f));
                case COMMIT -> m = new Commit();
                case ANNOUNCE -> m = new Announce();
                case NOTED -> m = new Noted();
                default -> throw new ProtocolException("unknown message type " + type);
            }
            if (f.hasRemaining()) throw new ProtocolException(f.remaining() + " extra bytes after message type " + type);
            return m;
        } catch (BufferUnderflowException e) {
            throw new ProtocolException("truncated message");
        }
    }

    private static void putString(ByteBuffer b, String s) {
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(raw.length, 1024);
        b.putShort((short) n).put(raw, 0, n);
    }

    private static String getString(ByteBuffer f) {
        int n = f.getShort() & 0xffff;
        byte[] raw = new byte[n];
        f.get(raw);
        return new String(raw, StandardCharsets.UTF_8);
    }
}
