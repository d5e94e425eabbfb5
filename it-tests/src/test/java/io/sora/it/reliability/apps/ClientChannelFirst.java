package io.sora.it.reliability.apps;

import java.io.EOFException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Opens a client socket channel as the very first thing {@code main} does (no file read, no address
 * resolved before it), then binds a server channel, connects the client to it, exchanges four bytes and
 * prints {@code PATH <client> <server>}; then the same with a server socket and a socket, printing
 * {@code STREAMPATH <client> <server>}. On JDK 22+ the agent's start, reading its rules, needs the class
 * such a {@code main} loads first ({@code sun.nio.ch.SocketChannelImpl}).
 */
public final class ClientChannelFirst {
    private ClientChannelFirst() {
    }

    public static void main(String[] args) throws Exception {
        try (SocketChannel c = SocketChannel.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(Apps.LOOPBACK, 0));
            c.connect(server.getLocalAddress());
            try (SocketChannel s = server.accept()) {
                c.write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer b = ByteBuffer.allocate(4);
                while (b.hasRemaining()) {
                    if (s.read(b) < 0) throw new EOFException("EOF before 4 bytes");
                }
                if (!"ping".equals(new String(b.array(), StandardCharsets.US_ASCII))) {
                    throw new IllegalStateException("read " + new String(b.array(), StandardCharsets.US_ASCII));
                }
                System.out.println("PATH " + Apps.path(c.socket()) + " " + Apps.path(s.socket()));
            }
        }
        try (ServerSocket ss = new ServerSocket(0, 50, Apps.LOOPBACK);
             Socket c = new Socket(Apps.LOOPBACK, ss.getLocalPort()); Socket s = ss.accept()) {
            c.getOutputStream().write(7);
            if (s.getInputStream().read() != 7) throw new IllegalStateException("the byte did not arrive");
            System.out.println("STREAMPATH " + Apps.path(c) + " " + Apps.path(s));
        }
    }
}
