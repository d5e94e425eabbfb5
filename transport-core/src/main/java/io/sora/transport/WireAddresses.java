package io.sora.transport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;

/**
 * How every pairing protocol (shm, rdma) writes a TCP endpoint: one byte of address length (4 or 16),
 * the address bytes, the port as an unsigned short. Decoding never resolves a name.
 */
public final class WireAddresses {
    private WireAddresses() {
    }

    public static void put(ByteBuffer b, InetSocketAddress a) {
        byte[] raw = a.getAddress().getAddress();
        b.put((byte) raw.length).put(raw).putShort((short) a.getPort());
    }

    /**
     * As {@link #put(ByteBuffer, InetSocketAddress)}, into {@code to} at {@code at}: the index after it, or -1
     * if it does not fit (nothing is written then). Array forms for the pairing's hot path: a connection's
     * set-up runs interpreted in a cold JVM, where each byte through a direct buffer's accessors costs a dozen
     * calls and an array index one bytecode.
     */
    public static int put(byte[] to, int at, InetSocketAddress a) {
        byte[] raw = a.getAddress().getAddress();
        int end = at + 1 + raw.length + 2;
        if (at < 0 || end > to.length) return -1;
        to[at] = (byte) raw.length;
        System.arraycopy(raw, 0, to, at + 1, raw.length);
        int port = a.getPort();
        to[end - 2] = (byte) (port >>> 8);
        to[end - 1] = (byte) port;
        return end;
    }

    /** The index after the endpoint written at {@code at} of {@code from} by {@link #put(byte[], int, InetSocketAddress)}. */
    public static int end(byte[] from, int at) {
        return at + 1 + (from[at] & 0xff) + 2;
    }

    /**
     * Reads an endpoint written at {@code at} of {@code from} by {@link #put(byte[], int, InetSocketAddress)};
     * a malformed one (or one running past the array) is a {@link ProtocolException}.
     */
    public static InetSocketAddress get(byte[] from, int at) throws ProtocolException {
        if (at < 0 || at >= from.length) throw new ProtocolException("truncated address");
        int n = addressLength(from[at]);
        if (at + 1 + n + 2 > from.length) throw new ProtocolException("truncated address");
        byte[] raw = java.util.Arrays.copyOfRange(from, at + 1, at + 1 + n);
        return endpoint(raw, ((from[at + 1 + n] & 0xff) << 8) | (from[at + 2 + n] & 0xff));
    }

    /** Reads an endpoint written by {@link #put}; a malformed one is a {@link ProtocolException}. */
    public static InetSocketAddress get(ByteBuffer f) throws ProtocolException {
        byte[] raw = new byte[addressLength(f.get())];
        f.get(raw);
        return endpoint(raw, f.getShort() & 0xffff);
    }

    /** The address length a length byte gives: 4 or 16, else a {@link ProtocolException}. */
    private static int addressLength(byte b) throws ProtocolException {
        int n = b & 0xff;
        if (n != 4 && n != 16) throw new ProtocolException("bad address length " + n);
        return n;
    }

    /** The endpoint of {@code raw} (4 or 16 bytes) and {@code port}; never resolves a name. */
    private static InetSocketAddress endpoint(byte[] raw, int port) throws ProtocolException {
        try {
            // getByAddress turns an IPv4-mapped IPv6 address into an Inet4Address, as Socket does.
            return new InetSocketAddress(InetAddress.getByAddress(raw), port);
        } catch (IOException e) {
            throw new ProtocolException("bad address: " + e.getMessage());
        }
    }
}
