package io.sora.it.reliability.apps;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code <port> <connections>}: accepts that many connections, echoes each on its own thread until
 * EOF, then prints {@code SERVED shm=<n> tcp=<n> failed=<n>} and exits.
 */
public final class EchoServer {
    private EchoServer() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int connections = Integer.parseInt(args[1]);
        AtomicInteger shm = new AtomicInteger();
        AtomicInteger tcp = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        try (ServerSocket ss = new ServerSocket(port, connections + 50, Apps.LOOPBACK)) {
            System.out.println("READY");
            for (int i = 0; i < connections; i++) {
                Socket s = ss.accept();
                ("shm".equals(Apps.path(s)) ? shm : tcp).incrementAndGet();
                Thread t = new Thread(() -> echo(s, failed), "echo-" + i);
                t.start();
                threads.add(t);
            }
        }
        for (Thread t : threads) t.join(300_000);
        System.out.println("SERVED shm=" + shm + " tcp=" + tcp + " failed=" + failed);
    }

    private static void echo(Socket s, AtomicInteger failed) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] b = new byte[65536];
            int n;
            while ((n = in.read(b)) >= 0) out.write(b, 0, n);
        } catch (IOException e) {
            failed.incrementAndGet();
            System.out.println("ECHO_FAILED " + e);
        }
    }
}
