package io.sora.it.rdma;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The peer JVM {@link RdmaPeerKillTest} kills: {@code server <ip> | client <ip> <port>}, then
 * {@code stream|stall}. Runs with the agent and rdma rules. A server binds an ephemeral port on
 * {@code ip}, prints {@code READY <port>} and accepts one connection; a client connects. Both print
 * {@code PATH <path>}, then read and write 64 KiB blocks at once on two threads, printing
 * {@code STREAMING in=<n> out=<n>} once 2 MiB went each way. With {@code stall} both threads then stop
 * (the survivor's writer fills the ring and its reader starves) and {@code STALLED} is printed; with
 * {@code stream} they go on. Either way the process waits to be killed (exit 3 after 10 minutes).
 */
public final class RdmaPeer {
    static final long STREAMING = 2 << 20;

    private RdmaPeer() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        InetAddress ip = InetAddress.getByName(args[1]);
        Socket s;
        String mode;
        if (args[0].equals("server")) {
            mode = args[2];
            try (ServerSocket ss = new ServerSocket(0, 5, ip)) {
                System.out.println("READY " + ss.getLocalPort());
                s = ss.accept();
            }
        } else {
            mode = args[3];
            s = new Socket(ip, Integer.parseInt(args[2]));
        }
        System.out.println("PATH " + RdmaTransferTest.pathOf(s));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong in = new AtomicLong();
        AtomicLong out = new AtomicLong();
        InputStream is = s.getInputStream();
        OutputStream os = s.getOutputStream();
        Thread reader = daemon("peer-reader", () -> {
            byte[] b = new byte[65536];
            int n;
            while (!stop.get() && (n = is.read(b)) >= 0) in.addAndGet(n);
        });
        Thread writer = daemon("peer-writer", () -> {
            byte[] b = new byte[65536];
            while (!stop.get()) {
                os.write(b);
                out.addAndGet(b.length);
            }
        });
        for (int i = 0; i < 120_000 && (in.get() < STREAMING || out.get() < STREAMING); i++) Thread.sleep(5);
        System.out.println("STREAMING in=" + in.get() + " out=" + out.get());
        if (mode.equals("stall")) {
            stop.set(true);
            // a thread inside read() or write() finishes that call: wait until both are out of it
            reader.join(60_000);
            writer.join(60_000);
            System.out.println("STALLED in=" + in.get() + " out=" + out.get() + " reader=" + reader.getState()
                    + " writer=" + writer.getState());
        }
        Thread.sleep(600_000); // killed long before
        System.exit(3);
    }

    private interface Body {
        void run() throws IOException;
    }

    private static Thread daemon(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (IOException e) {
                System.out.println(name + " ended: " + e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
