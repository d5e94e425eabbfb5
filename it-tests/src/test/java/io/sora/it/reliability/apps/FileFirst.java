package io.sora.it.reliability.apps;

import java.io.EOFException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resolves an address and reads a file with {@code Files.readAllBytes} as the first things {@code main}
 * does (as most applications do before they open a socket: their configuration, the JDK's own security
 * properties), then exchanges a byte over a server socket and a socket, and one over a server channel
 * and a channel; prints {@code PATH <client> <server>} for each. On JDK 25 the JDK's file streams load
 * {@code sun.nio.ch.SocketChannelImpl} (an {@code instanceof} in {@code sun.nio.ch.Streams}), a class
 * the agent's start gate held: main then waited for an agent start that itself waited to load that class.
 *
 * <pre>FileFirst FILE</pre>
 */
public final class FileFirst {
    private FileFirst() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress loopback = InetAddress.getByName(Apps.LOOPBACK.getHostAddress());
        System.out.println("READ " + Files.readAllBytes(Path.of(args[0])).length);
        try (ServerSocket ss = new ServerSocket(0, 5, loopback);
             Socket c = new Socket(loopback, ss.getLocalPort());
             Socket s = ss.accept()) {
            c.getOutputStream().write(7);
            InputStream in = s.getInputStream();
            if (in.read() != 7) throw new IllegalStateException("stream byte");
            System.out.println("PATH " + Apps.path(c) + " " + Apps.path(s));
        }
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(loopback, 0));
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress()); SocketChannel s = server.accept()) {
                c.write(ByteBuffer.wrap(new byte[] {9}));
                ByteBuffer b = ByteBuffer.allocate(1);
                for (int i = 0; i < 1000 && b.hasRemaining(); i++) {
                    if (s.read(b) < 0) throw new EOFException("EOF before the byte");
                }
                if (b.get(0) != 9) throw new IllegalStateException("channel byte " + b.get(0));
                System.out.println("CHANNELPATH " + Apps.path(c.socket()) + " " + Apps.path(s.socket()));
            }
        }
    }
}
