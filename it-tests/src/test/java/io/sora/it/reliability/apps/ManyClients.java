package io.sora.it.reliability.apps;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code <port> <connections> <bytes>}: opens all connections, then on every one at once writes
 * {@code bytes} bytes (a pattern unique to the connection) while reading the echo back and checking
 * each byte. Prints {@code DONE ok=<n> shm=<n> failed=<n>}.
 */
public final class ManyClients {
    private ManyClients() {
    }

    static byte at(int conn, long i) {
        return (byte) (i * 31 + conn * 7 + (i >>> 13));
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        int bytes = Integer.parseInt(args[2]);
        List<Socket> sockets = new ArrayList<>();
        AtomicInteger shm = new AtomicInteger();
        long c0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Socket s = new Socket(Apps.LOOPBACK, port);
            if ("shm".equals(Apps.path(s))) shm.incrementAndGet();
            sockets.add(s);
        }
        System.out.println("CONNECTED " + n + " ms=" + (System.nanoTime() - c0) / 1_000_000);
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(n);
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            int conn = i;
            Socket s = sockets.get(i);
            Thread writer = new Thread(() -> {
                try {
                    start.await();
                    OutputStream out = s.getOutputStream();
                    byte[] b = new byte[16384];
                    for (long pos = 0; pos < bytes; pos += b.length) {
                        int len = (int) Math.min(b.length, bytes - pos);
                        for (int k = 0; k < len; k++) b[k] = at(conn, pos + k);
                        out.write(b, 0, len);
                    }
                    s.shutdownOutput();
                } catch (Exception e) {
                    System.out.println("WRITE_FAILED " + conn + " " + e);
                }
            }, "w" + i);
            Thread reader = new Thread(() -> {
                try (s) {
                    start.await();
                    s.setSoTimeout(120_000);
                    InputStream in = s.getInputStream();
                    byte[] b = new byte[16384];
                    long pos = 0;
                    int r;
                    while ((r = in.read(b)) >= 0) {
                        for (int k = 0; k < r; k++) {
                            if (b[k] != at(conn, pos + k)) throw new IllegalStateException("wrong byte at " + (pos + k));
                        }
                        pos += r;
                    }
                    if (pos != bytes) throw new IllegalStateException("echo had " + pos + " bytes, sent " + bytes);
                    ok.incrementAndGet();
                } catch (Exception e) {
                    failed.incrementAndGet();
                    System.out.println("CONNECTION_FAILED " + conn + " " + e);
                } finally {
                    done.countDown();
                }
            }, "r" + i);
            writer.start();
            reader.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        boolean all = done.await(240, TimeUnit.SECONDS);
        System.out.println("DONE ok=" + ok + " shm=" + shm + " failed=" + failed + " all_returned=" + all
                + " ms=" + (System.nanoTime() - t0) / 1_000_000);
        System.exit(all ? 0 : 2);
    }
}
