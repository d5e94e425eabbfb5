package io.sora.examples;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The JSOR article's sample server: accepts one client, then for each iteration reads a message and
 * writes it back. Unlike the article's loop it reads each message fully (a single read over TCP may
 * return fewer bytes than asked).
 *
 * <pre>java io.sora.examples.SampleServer &lt;address&gt; &lt;port&gt; &lt;iterations&gt; &lt;message size&gt;</pre>
 */
public final class SampleServer {
    private SampleServer() {
    }

    public static void main(String[] args) throws IOException {
        SampleArgs a = SampleArgs.parse("SampleServer", args);
        try (ServerSocket server = new ServerSocket(a.port(), 0, InetAddress.getByName(a.address()))) {
            System.out.println("Server Ready>");
            try (Socket socket = server.accept()) {
                System.out.println("Local: " + socket.getLocalSocketAddress() + " Remote: " + socket.getRemoteSocketAddress());
                System.out.println("SBuf: " + socket.getSendBufferSize() + " bytes RBuf: " + socket.getReceiveBufferSize() + " bytes");
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                byte[] buf = new byte[a.size()];
                long total = 0;
                for (int i = 0; i < a.iterations(); i++) {
                    readFully(in, buf);
                    out.write(buf, 0, a.size());
                    total += a.size();
                }
                out.flush();
                System.out.println("Received/Sent " + total + " bytes");
            }
        }
    }

    static void readFully(InputStream in, byte[] buf) throws IOException {
        int off = 0;
        while (off < buf.length) {
            int n = in.read(buf, off, buf.length - off);
            if (n < 0) {
                throw new EOFException("peer closed after " + off + " of " + buf.length + " bytes");
            }
            off += n;
        }
    }
}
