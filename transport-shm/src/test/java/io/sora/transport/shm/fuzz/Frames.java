package io.sora.transport.shm.fuzz;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The pairing frames written from docs/shm.md alone (not with the production encoder), so the tests
 * also check that the documentation and the code agree: {@code u16 length | u32 "SORA" | u16 version
 * | u8 type | body}, big-endian.
 */
final class Frames {
    static final int HELLO = 1;
    static final int OFFER = 2;
    static final int NO = 3;
    static final int COMMIT = 4;
    static final int ANNOUNCE = 5;
    static final int NOTED = 6;
    static final int MAX_FRAME = 4096;

    private Frames() {
    }

    static byte[] frame(int type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(2 + 7 + body.length);
        b.putShort((short) (7 + body.length)).putInt(0x534F5241).putShort((short) 1).put((byte) type).put(body);
        return b.array();
    }

    static byte[] hello(InetSocketAddress client, InetSocketAddress server, int receiveRing) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        address(body, client);
        address(body, server);
        body.writeBytes(ByteBuffer.allocate(4).putInt(receiveRing).array());
        return frame(HELLO, body.toByteArray());
    }

    static byte[] offer(String path, byte[] secret, int c2s, int s2c, long serverConnectionId) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + p.length + secret.length + 16);
        b.putShort((short) p.length).put(p).put(secret).putInt(c2s).putInt(s2c).putLong(serverConnectionId);
        return frame(OFFER, b.array());
    }

    static byte[] no(String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        return frame(NO, ByteBuffer.allocate(2 + r.length).putShort((short) r.length).put(r).array());
    }

    static byte[] commit() {
        return frame(COMMIT, new byte[0]);
    }

    private static void address(ByteArrayOutputStream out, InetSocketAddress a) {
        byte[] raw = a.getAddress().getAddress();
        out.write(raw.length);
        out.writeBytes(raw);
        out.write(a.getPort() >> 8);
        out.write(a.getPort() & 0xff);
    }

    /** A parsed frame: its type and body. */
    record Frame(int type, byte[] body) {
        /** The u16-length-prefixed UTF-8 string at the start of the body (OFFER path, NO reason). */
        String string() {
            ByteBuffer b = ByteBuffer.wrap(body);
            byte[] s = new byte[b.getShort() & 0xffff];
            b.get(s);
            return new String(s, StandardCharsets.UTF_8);
        }

        /** OFFER: the 16-byte secret after the path. */
        byte[] secret() {
            ByteBuffer b = ByteBuffer.wrap(body);
            b.position(2 + (b.getShort() & 0xffff));
            byte[] s = new byte[16];
            b.get(s);
            return s;
        }
    }

    /** Reads one frame from a blocking channel; null at EOF before any byte. */
    static Frame read(SocketChannel ch) throws IOException {
        ByteBuffer len = ByteBuffer.allocate(2);
        if (!fill(ch, len)) return null;
        int n = len.flip().getShort() & 0xffff;
        ByteBuffer rest = ByteBuffer.allocate(n);
        if (!fill(ch, rest)) throw new IOException("EOF inside a frame of " + n + " bytes");
        rest.flip();
        if (rest.getInt() != 0x534F5241) throw new IOException("bad magic");
        rest.getShort();
        int type = rest.get();
        byte[] body = new byte[rest.remaining()];
        rest.get(body);
        return new Frame(type, body);
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                if (b.position() == 0) return false;
                throw new IOException("EOF after " + b.position() + " bytes");
            }
        }
        return true;
    }
}
