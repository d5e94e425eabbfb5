package io.sora.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;

/**
 * The JSOR article's sample client: connects, then times {@code iterations} round trips of a
 * {@code size}-byte message with {@link System#nanoTime()} and checks every echoed byte.
 *
 * <pre>java io.sora.examples.SampleClient &lt;address&gt; &lt;port&gt; &lt;iterations&gt; &lt;message size&gt;</pre>
 */
public final class SampleClient {
    private SampleClient() {
    }

    public static void main(String[] args) throws IOException {
        SampleArgs a = SampleArgs.parse("SampleClient", args);
        try (Socket socket = new Socket(a.address(), a.port())) {
            System.out.println("Client Ready>");
            System.out.println("Local: " + socket.getLocalSocketAddress() + " Remote: " + socket.getRemoteSocketAddress());
            System.out.println("SBuf: " + socket.getSendBufferSize() + " bytes RBuf: " + socket.getReceiveBufferSize() + " bytes");
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] msg = new byte[a.size()];
            for (int i = 0; i < msg.length; i++) {
                msg[i] = (byte) (i * 31 + 7);
            }
            byte[] echo = new byte[a.size()];
            long start = System.nanoTime();
            for (int i = 0; i < a.iterations(); i++) {
                out.write(msg, 0, a.size());
                SampleServer.readFully(in, echo);
            }
            long usec = (System.nanoTime() - start) / 1000;
            if (!Arrays.equals(msg, echo)) {
                throw new IOException("echoed message differs from the message sent");
            }
            System.out.println("Round trip time of " + ((long) a.iterations() * a.size()) + " bytes: " + usec + " usec");
        }
    }
}
