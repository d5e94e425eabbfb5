package io.sora.it.apps;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * One loopback connection of sockets and one of channels, each carrying {@link #MESSAGES} messages of a
 * size of its own ({@link #STREAM_BYTES} and {@link #CHANNEL_BYTES}) from client to server, every write
 * and read whole, so each shows as JFR {@code jdk.SocketWrite}/{@code jdk.SocketRead} events of exactly that
 * size, or reads of parts of it (JfrEventsIT sums them by port). Prints {@code STREAM|CHANNEL <server port>
 * <client port>} for each connection and {@code DONE} at the end.
 */
public final class JfrEventsApp {
    public static final int MESSAGES = 10;
    public static final int STREAM_BYTES = 111;
    public static final int CHANNEL_BYTES = 222;

    private JfrEventsApp() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (ServerSocket ss = new ServerSocket(0, 5, loopback);
             Socket c = new Socket(loopback, ss.getLocalPort());
             Socket s = ss.accept()) {
            System.out.println("STREAM " + ss.getLocalPort() + " " + c.getLocalPort());
            OutputStream out = c.getOutputStream();
            InputStream in = s.getInputStream();
            byte[] msg = new byte[STREAM_BYTES];
            byte[] got = new byte[STREAM_BYTES];
            for (int i = 0; i < MESSAGES; i++) {
                out.write(msg);
                for (int n = 0; n < got.length; ) {
                    int r = in.read(got, n, got.length - n);
                    if (r < 0) throw new IllegalStateException("EOF");
                    n += r;
                }
            }
        }
        try (ServerSocketChannel ssc = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
             SocketChannel c = SocketChannel.open(ssc.getLocalAddress());
             SocketChannel s = ssc.accept()) {
            System.out.println("CHANNEL " + ((InetSocketAddress) ssc.getLocalAddress()).getPort() + " "
                    + ((InetSocketAddress) c.getLocalAddress()).getPort());
            for (int i = 0; i < MESSAGES; i++) {
                ByteBuffer msg = ByteBuffer.allocate(CHANNEL_BYTES);
                while (msg.hasRemaining()) c.write(msg);
                ByteBuffer got = ByteBuffer.allocate(CHANNEL_BYTES);
                while (got.hasRemaining()) {
                    if (s.read(got) < 0) throw new IllegalStateException("EOF");
                }
            }
        }
        System.out.println("DONE");
    }
}
