package io.sora.it.reliability.apps;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code server|client <port> <bytes> <seed>}: sends {@code bytes} bytes in writes of random sizes
 * (1 byte to 256 KiB) while it receives as many from the peer in reads of random sizes, both
 * directions at once; prints {@code PATH <path>}, {@code SENT <sha-256>}, {@code RECEIVED <sha-256>},
 * then, after both sides half-closed, {@code OK}.
 */
public final class TransferPeer {
    private TransferPeer() {
    }

    public static void main(String[] args) throws Exception {
        boolean server = args[0].equals("server");
        int port = Integer.parseInt(args[1]);
        long bytes = Long.parseLong(args[2]);
        long seed = Long.parseLong(args[3]);
        if (server) {
            try (ServerSocket ss = new ServerSocket(port, 5, Apps.LOOPBACK)) {
                System.out.println("READY");
                try (Socket s = ss.accept()) {
                    run(s, bytes, seed);
                }
            }
        } else {
            try (Socket s = new Socket(Apps.LOOPBACK, port)) {
                run(s, bytes, seed);
            }
        }
        System.out.println("OK");
    }

    private static void run(Socket s, long bytes, long seed) throws Exception {
        System.out.println("PATH " + Apps.path(s));
        s.setSoTimeout(120_000);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<byte[]> sent = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                sent.set(send(s.getOutputStream(), bytes, seed));
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "transfer-writer");
        writer.start();
        byte[] received = receive(s.getInputStream(), bytes, seed ^ 0x5DEECE66DL);
        writer.join(600_000);
        if (failure.get() != null) throw new IllegalStateException("writer failed", failure.get());
        System.out.println("SENT " + HexFormat.of().formatHex(sent.get()));
        System.out.println("RECEIVED " + HexFormat.of().formatHex(received));
        s.shutdownOutput();
        if (s.getInputStream().read() != -1) throw new IllegalStateException("bytes after the agreed length");
    }

    static byte[] send(OutputStream out, long total, long seed) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] buf = new byte[1 << 20];
        rnd.nextBytes(buf);
        long left = total;
        while (left > 0) {
            int n = (int) Math.min(left, 1 + rnd.nextInt(256 << 10));
            int off = rnd.nextInt(buf.length - n + 1);
            buf[off] ^= (byte) left; // no two writes alike
            out.write(buf, off, n);
            sha.update(buf, off, n);
            left -= n;
        }
        return sha.digest();
    }

    static byte[] receive(InputStream in, long total, long seed) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] buf = new byte[300_000];
        long got = 0;
        while (got < total) {
            int n = in.read(buf, 0, (int) Math.min(total - got, 1 + rnd.nextInt(buf.length)));
            if (n < 0) throw new IllegalStateException("EOF after " + got + " of " + total + " bytes");
            sha.update(buf, 0, n);
            got += n;
        }
        return sha.digest();
    }
}
