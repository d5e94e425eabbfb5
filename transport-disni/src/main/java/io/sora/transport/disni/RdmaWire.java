package io.sora.transport.disni;

import io.sora.transport.ConnectionKey;
import io.sora.transport.WireAddresses;
import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The messages two sora agents exchange with RDMA SEND/RECV on a fresh RC queue pair. Every message
 * is {@code u32 magic "SORA" | u16 version | u8 type | body}, big-endian, at most {@link #SLOT_SIZE}
 * bytes (the size of one posted receive buffer).
 *
 * <pre>
 * HELLO  (1) client address, server address (u8 len 4|16, bytes, u16 port each),
 *            i64 client ring address, i32 client ring rkey, i32 client ring size
 * OFFER  (2) i64 server ring address, i32 rkey, i32 size, 16 bytes secret, i64 server connection id
 * NO     (3) u16 n, n bytes UTF-8 reason (the server's refusal of a HELLO, or the client giving an OFFER up
 *            before it wrote the proof)
 * COMMIT (4) the 16-byte secret of the OFFER
 * CTRL   (5) i64 consumer cursor, i32 flags, i64 receives reposted
 *            (after COMMIT: byte credits, half-close flags, and receive-slot credits: how many
 *            receives the sender of the CTRL has posted again since COMMIT's side started counting)
 * </pre>
 * Data never travels in messages: it is RDMA-written into the peer's ring.
 *
 * <p>Between OFFER and COMMIT the client writes the PROOF on the TCP connection itself (not over RDMA):
 * {@code u32 magic "SORP" | the OFFER's 16-byte secret}. Only the TCP connection's owner can write it
 * there; the server takes it from the front of the TCP stream before its application reads anything
 * (docs/rdma.md, "Proof of the TCP connection").
 */
final class RdmaWire {
    static final int MAGIC = 0x534F5241; // "SORA"
    /**
     * 2: CTRL carries the receives reposted (slot credits). 3: the client makes its RDMA connection before
     * its TCP connect (its announcement, docs/rdma.md "Pairing"); a server of 3 refuses an older client,
     * whose RDMA connection made after an accept that decided TCP at once would look announced. 4: the
     * client writes the PROOF on its TCP connection before COMMIT, and may answer an OFFER with NO.
     */
    static final int VERSION = 4;
    /** Size of one receive buffer, so the upper bound of every message. */
    static final int SLOT_SIZE = 128;
    static final int SECRET_SIZE = 16;
    static final int MAX_REASON = 96;
    static final byte HELLO = 1;
    static final byte OFFER = 2;
    static final byte NO = 3;
    static final byte COMMIT = 4;
    static final byte CTRL = 5;
    static final int PREAMBLE = 4 + 2 + 1;
    /** "SORP": the first bytes of the proof a client writes on its TCP connection. */
    static final int PROOF_MAGIC = 0x534F5250;
    static final int PROOF_SIZE = 4 + SECRET_SIZE;
    /** Length of a CTRL message; small enough to be sent inline. */
    static final int CTRL_SIZE = PREAMBLE + 8 + 4 + 8;

    private RdmaWire() {
    }

    sealed interface Message permits Hello, Offer, No, Commit {}

    record Hello(ConnectionKey key, long ringAddress, int rkey, int ringSize) implements Message {}

    record Offer(long ringAddress, int rkey, int ringSize, byte[] secret, long serverConnectionId) implements Message {}

    record No(String reason) implements Message {}

    record Commit(byte[] secret) implements Message {}

    /** The proof for an OFFER's {@code secret}: what the client writes on its TCP connection. */
    static byte[] proof(byte[] secret) {
        return ByteBuffer.allocate(PROOF_SIZE).putInt(PROOF_MAGIC).put(secret, 0, SECRET_SIZE).array();
    }

    /** Writes {@code m} at {@code offset} (absolute puts) and returns its length. */
    static int encode(Message m, ByteBuffer buf, int offset) {
        ByteBuffer b = buf.duplicate().position(offset).limit(offset + SLOT_SIZE).slice();
        b.putInt(MAGIC).putShort((short) VERSION);
        if (m instanceof Hello h) {
            b.put(HELLO);
            WireAddresses.put(b, h.key().client());
            WireAddresses.put(b, h.key().server());
            b.putLong(h.ringAddress()).putInt(h.rkey()).putInt(h.ringSize());
        } else if (m instanceof Offer o) {
            b.put(OFFER).putLong(o.ringAddress()).putInt(o.rkey()).putInt(o.ringSize()).put(o.secret())
                    .putLong(o.serverConnectionId());
        } else if (m instanceof No n) {
            b.put(NO);
            byte[] raw = n.reason().getBytes(StandardCharsets.UTF_8);
            int len = Math.min(raw.length, MAX_REASON);
            b.putShort((short) len).put(raw, 0, len);
        } else if (m instanceof Commit c) {
            b.put(COMMIT).put(c.secret());
        }
        return b.position();
    }

    /** Writes a CTRL message at {@code offset} without allocating. */
    static void encodeCtrl(ByteBuffer buf, int offset, long consumed, int flags, long reposted) {
        buf.putInt(offset, MAGIC).putShort(offset + 4, (short) VERSION).put(offset + 6, CTRL)
                .putLong(offset + PREAMBLE, consumed).putInt(offset + PREAMBLE + 8, flags)
                .putLong(offset + PREAMBLE + 12, reposted);
    }

    /** Whether the {@code length} bytes at {@code offset} are a CTRL message (checked without allocating). */
    static boolean isCtrl(ByteBuffer buf, int offset, int length) {
        return length == CTRL_SIZE && buf.getInt(offset) == MAGIC && buf.get(offset + 6) == CTRL;
    }

    static long ctrlConsumed(ByteBuffer buf, int offset) {
        return buf.getLong(offset + PREAMBLE);
    }

    static int ctrlFlags(ByteBuffer buf, int offset) {
        return buf.getInt(offset + PREAMBLE + 8);
    }

    static long ctrlReposted(ByteBuffer buf, int offset) {
        return buf.getLong(offset + PREAMBLE + 12);
    }

    /** Decodes a pairing message (not CTRL). */
    static Message decode(ByteBuffer buf, int offset, int length) throws ProtocolException {
        if (length < PREAMBLE || length > SLOT_SIZE) throw new ProtocolException("bad message length " + length);
        ByteBuffer f = buf.duplicate().position(offset).limit(offset + length).slice();
        try {
            int magic = f.getInt();
            if (magic != MAGIC) throw new ProtocolException("bad magic 0x" + Integer.toHexString(magic));
            int version = f.getShort() & 0xffff;
            if (version != VERSION) throw new ProtocolException("unsupported version " + version + ", expected " + VERSION);
            byte type = f.get();
            Message m;
            switch (type) {
                case HELLO -> m = new Hello(new ConnectionKey(WireAddresses.get(f), WireAddresses.get(f)), f.getLong(), f.getInt(), f.getInt());
                case OFFER -> {
                    long addr = f.getLong();
                    int rkey = f.getInt();
                    int size = f.getInt();
                    byte[] secret = new byte[SECRET_SIZE];
                    f.get(secret);
                    m = new Offer(addr, rkey, size, secret, f.getLong());
                }
                case NO -> {
                    byte[] raw = new byte[f.getShort() & 0xffff];
                    f.get(raw);
                    m = new No(new String(raw, StandardCharsets.UTF_8));
                }
                case COMMIT -> {
                    byte[] secret = new byte[SECRET_SIZE];
                    f.get(secret);
                    m = new Commit(secret);
                }
                default -> throw new ProtocolException("unexpected message type " + type);
            }
            if (f.hasRemaining()) throw new ProtocolException(f.remaining() + " extra bytes after message type " + type);
            return m;
        } catch (BufferUnderflowException e) {
            throw new ProtocolException("truncated message of " + length + " bytes");
        }
    }

}
