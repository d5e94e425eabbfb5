package io.sora.it.accept;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.Random;

/**
 * Makes {@code n} connections to 127.0.0.1:port one after another; on each sends {@code size} random
 * bytes, reads the echo back and compares every byte, then closes. Prints {@code OK n} when all were
 * exact, {@code MISMATCH i} (exit 3) at the first wrong byte.
 *
 * <p>Arguments: {@code <port> <n> <size> <seed>}.
 */
public final class SequentialEchoClient {
    private SequentialEchoClient() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        Random random = new Random(Long.parseLong(args[3]));
        byte[] sent = new byte[size];
        byte[] back = new byte[size];
        for (int i = 0; i < n; i++) {
            random.nextBytes(sent);
            try (Socket s = new Socket("127.0.0.1", port)) {
                OutputStream out = s.getOutputStream();
                out.write(sent);
                new DataInputStream(s.getInputStream()).readFully(back);
                if (!Arrays.equals(sent, back)) {
                    System.out.println("MISMATCH " + i);
                    System.exit(3);
                }
            }
        }
        System.out.println("OK " + n);
    }
}
