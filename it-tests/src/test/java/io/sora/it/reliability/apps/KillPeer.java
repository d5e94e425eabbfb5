package io.sora.it.reliability.apps;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code server|client <port> victim|survivor}: streams in both directions at once (a reader and a
 * writer thread) until the connection breaks. Prints {@code STREAMING} once 4 MiB went each way. The
 * victim waits to be killed. The survivor, when its peer is killed, prints
 * {@code READER_END <epoch ms> <outcome>} and {@code WRITER_END <epoch ms> <outcome>} as each thread
 * returns, then {@code THREADS_ENDED} (or {@code STUCK <thread states>}), and exits.
 */
public final class KillPeer {
    private static final long STREAMING = 4 << 20;

    private KillPeer() {
    }

    public static void main(String[] args) throws Exception {
        boolean server = args[0].equals("server");
        int port = Integer.parseInt(args[1]);
        boolean victim = args[2].equals("victim");
        if (server) {
            try (ServerSocket ss = new ServerSocket(port, 5, Apps.LOOPBACK)) {
                System.out.println("READY");
                run(ss.accept(), victim);
            }
        } else {
            run(new Socket(Apps.LOOPBACK, port), victim);
        }
    }

    private static void run(Socket s, boolean victim) throws Exception {
        System.out.println("PATH " + Apps.path(s));
        AtomicLong in = new AtomicLong();
        AtomicLong out = new AtomicLong();
        Thread reader = new Thread(() -> {
            byte[] b = new byte[65536];
            String outcome;
            try {
                int n;
                while ((n = s.getInputStream().read(b)) >= 0) in.addAndGet(n);
                outcome = "EOF";
            } catch (IOException e) {
                outcome = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            System.out.println("READER_END " + System.currentTimeMillis() + " " + outcome);
        }, "kill-reader");
        Thread writer = new Thread(() -> {
            byte[] b = new byte[65536];
            String outcome;
            try {
                for (;;) {
                    s.getOutputStream().write(b);
                    out.addAndGet(b.length);
                }
            } catch (IOException e) {
                outcome = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            System.out.println("WRITER_END " + System.currentTimeMillis() + " " + outcome);
        }, "kill-writer");
        reader.start();
        writer.start();
        for (int i = 0; i < 6000 && (in.get() < STREAMING || out.get() < STREAMING); i++) Thread.sleep(5);
        System.out.println("STREAMING in=" + in.get() + " out=" + out.get());
        if (victim) {
            Thread.sleep(120_000); // killed long before
            System.exit(3);
        }
        reader.join(30_000);
        writer.join(30_000);
        if (reader.isAlive() || writer.isAlive()) {
            System.out.println("STUCK reader=" + reader.getState() + " writer=" + writer.getState());
            System.exit(2);
        }
        System.out.println("THREADS_ENDED");
        s.close();
    }
}
