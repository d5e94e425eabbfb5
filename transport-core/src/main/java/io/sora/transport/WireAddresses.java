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

    /** Reads an endpoint written by {@link #put}; a malformed one is a {@link ProtocolException}. */
    public static InetSocketAddress get(ByteBuffer f) throws ProtocolException {
        int n = f.get() & 0xff;
        if (n != 4 && n != 16) throw new ProtocolException("bad address length " + n);
        byte[] raw = new byte[n];
        f.get(raw);
        int port = f.getShort() & 0xffff;
        try {
            // getByAddress turns an IPv4-mapped IPv6 address into an Inet4Address, as Socket does.
            return new InetSocketAddress(InetAddress.getByAddress(raw), port);
        } catch (IOException e) {
            throw new ProtocolException("bad address: " + e.getMessage());
        }
    }
}
