package io.sora.it.reliability.apps;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * {@code <socket path> <client port> <server port>}: what a hostile local process can do without
 * sora's code: connect to a rendezvous socket and send a well-formed HELLO (docs/shm.md) for a
 * connection 127.0.0.1:client -> 127.0.0.1:server. Prints {@code CONNECT_FAILED <exception>}, or the
 * reply: {@code REPLY NO <reason>}, {@code REPLY type <n>} or {@code REPLY EOF}.
 */
public final class RawHello {
    private RawHello() {
    }

    public static void main(String[] args) throws Exception {
        SocketChannel ch;
        try {
            ch = SocketChannel.open(UnixDomainSocketAddress.of(args[0]));
        } catch (Exception e) {
            System.out.println("CONNECT_FAILED " + e);
            return;
        }
        try (ch) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            byte[] lo = InetAddress.getLoopbackAddress().getAddress();
            for (int port : new int[] {Integer.parseInt(args[1]), Integer.parseInt(args[2])}) {
                body.write(lo.length);
                body.writeBytes(lo);
                body.write(port >> 8);
                body.write(port & 0xff);
            }
            body.writeBytes(ByteBuffer.allocate(4).putInt(4096).array());
            byte[] b = body.toByteArray();
            ByteBuffer frame = ByteBuffer.allocate(9 + b.length);
            frame.putShort((short) (7 + b.length)).putInt(0x534F5241).putShort((short) 1).put((byte) 1).put(b).flip();
            ch.write(frame);
            ByteBuffer reply = ByteBuffer.allocate(4096);
            while (ch.read(reply) >= 0 && (reply.position() < 2 || reply.position() < 2 + (reply.getShort(0) & 0xffff))) {
                // a blocking read: the listener answers or closes
            }
            reply.flip();
            if (reply.remaining() < 9) {
                System.out.println("REPLY EOF");
            } else if (reply.get(8) == 3) {
                int n = reply.getShort(9) & 0xffff;
                byte[] r = new byte[n];
                reply.get(11, r);
                System.out.println("REPLY NO " + new String(r, StandardCharsets.UTF_8));
            } else {
                System.out.println("REPLY type " + reply.get(8));
            }
        }
    }
}
