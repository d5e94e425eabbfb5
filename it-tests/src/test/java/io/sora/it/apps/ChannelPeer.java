package io.sora.it.apps;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * A blocking NIO pair for the forked-JVM channel test: {@code server} prints {@code PORT <n>}, accepts
 * one {@code SocketChannel}; {@code client <port>} connects one. The client sends 4 MiB through
 * gathering writes of heap and direct buffers, then shuts its output down; the server reads it with
 * scattering reads, answers with its SHA-256 and 1 MiB of known bytes through the adaptor's output
 * stream, and closes; the client reads those through its adaptor's input stream until EOF. Every byte
 * is checked. Each side prints {@code PATH <path>} (from the agent's bridge when present) and {@code OK}.
 */
public final class ChannelPeer {
    private static final int UP = 4 << 20;
    private static final int DOWN = 1 << 20;

    private ChannelPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
                System.out.println("PORT " + ((InetSocketAddress) ss.getLocalAddress()).getPort());
                try (SocketChannel ch = ss.accept()) {
                    System.out.println("PATH " + BridgePath.of(ch));
                    serve(ch);
                }
            }
        } else {
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1])))) {
                System.out.println("PATH " + BridgePath.of(ch));
                talk(ch);
            }
        }
        System.out.println("OK");
    }

    private static void serve(SocketChannel ch) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        ByteBuffer[] bufs = {ByteBuffer.allocate(1000), ByteBuffer.allocateDirect(70_000), ByteBuffer.allocate(3)};
        long got = 0;
        for (;;) {
            for (ByteBuffer b : bufs) b.clear();
            long n = ch.read(bufs);
            if (n < 0) break;
            got += n;
            for (ByteBuffer b : bufs) {
                b.flip();
                md.update(b);
            }
        }
        if (got != UP) throw new IOException("server got " + got + " bytes, expected " + UP);
        byte[] expected = MessageDigest.getInstance("SHA-256").digest(up());
        if (!Arrays.equals(expected, md.digest())) throw new IOException("server: the client's bytes differ");
        ch.write(ByteBuffer.wrap(expected));
        ch.socket().getOutputStream().write(down());
    }

    private static void talk(SocketChannel ch) throws Exception {
        byte[] up = up();
        ByteBuffer direct = ByteBuffer.allocateDirect(up.length / 2);
        direct.put(up, up.length / 2, up.length / 2).flip();
        ByteBuffer[] srcs = {ByteBuffer.wrap(up, 0, up.length / 2), direct};
        long sent = 0;
        while (sent < up.length) sent += ch.write(srcs);
        ch.shutdownOutput();
        ByteBuffer digest = ByteBuffer.allocate(32);
        while (digest.hasRemaining()) {
            if (ch.read(digest) < 0) throw new IOException("client: EOF before the digest");
        }
        if (!Arrays.equals(MessageDigest.getInstance("SHA-256").digest(up), digest.array())) {
            throw new IOException("client: the server's digest differs");
        }
        InputStream in = ch.socket().getInputStream();
        byte[] down = new byte[DOWN + 1];
        int off = 0;
        for (int n; (n = in.read(down, off, down.length - off)) > 0; ) off += n;
        if (off != DOWN || !Arrays.equals(down(), Arrays.copyOf(down, DOWN))) {
            throw new IOException("client: got " + off + " bytes from the server, or they differ");
        }
        if (in.read() != -1) throw new IOException("client: no EOF after the server's bytes");
    }

    private static byte[] up() {
        byte[] b = new byte[UP];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (i * 31 + (i >>> 13));
        return b;
    }

    private static byte[] down() {
        byte[] b = new byte[DOWN];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (i * 7 + 3);
        return b;
    }
}
