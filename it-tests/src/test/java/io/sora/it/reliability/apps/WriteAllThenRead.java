package io.sora.it.reliability.apps;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.Random;

/**
 * {@code <port> <bytes> <connections>}: one connection after another, each writes a whole message of
 * {@code bytes} before it reads anything, then reads the echo back and compares it, then one more short
 * message each way, then closes. Prints {@code PATH <path>} per connection and {@code DONE ok=<n>}.
 * Against {@link EchoServer} (which answers each piece as it reads it) the two ends each write more than
 * a shm ring holds before reading what the other wrote.
 */
public final class WriteAllThenRead {
    private WriteAllThenRead() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int bytes = Integer.parseInt(args[1]);
        int connections = Integer.parseInt(args[2]);
        int ok = 0;
        for (int i = 0; i < connections; i++) {
            byte[] message = new byte[bytes];
            new Random(i).nextBytes(message);
            try (Socket s = new Socket(Apps.LOOPBACK, port)) {
                System.out.println("PATH " + Apps.path(s));
                OutputStream out = s.getOutputStream();
                out.write(message);
                InputStream in = s.getInputStream();
                byte[] back = new byte[bytes];
                Apps.readFully(in, back, 0, bytes);
                out.write(new byte[] {1, 2, 3});
                byte[] tail = new byte[3];
                Apps.readFully(in, tail, 0, 3);
                if (Arrays.equals(message, back) && Arrays.equals(new byte[] {1, 2, 3}, tail)) ok++;
                else System.out.println("MISMATCH connection " + i);
            }
        }
        System.out.println("DONE ok=" + ok);
    }
}
