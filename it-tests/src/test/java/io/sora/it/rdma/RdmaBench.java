package io.sora.it.rdma;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Locale;

/**
 * The benchmark run by tools/rxe-vm/run-rdma-bench.sh in the Soft-RoCE VM: in one JVM, a server
 * thread echoes and the main thread measures (1) 4 KiB ping-pong round trips (warm-up, then each
 * round trip timed; median and 99th percentile) and (2) one-way streaming throughput in 64 KiB
 * writes. With the agent and rdma rules the connection is on RDMA, without them on TCP.
 *
 * <p>Usage: {@code RdmaBench <address> <port> <timed round trips> <stream MiB>}; prints one line per
 * figure, e.g. {@code rtt path=rdma size=4096 median_us=61.2 p99_us=90.1 n=1000}.
 */
public final class RdmaBench {
    private static final int SIZE = 4096;
    private static final int CHUNK = 64 << 10;

    private RdmaBench() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress address = InetAddress.getByName(args[0]);
        int port = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        long streamBytes = Long.parseLong(args[3]) << 20;
        try (ServerSocket server = new ServerSocket(port, 5, address)) {
            Thread echo = new Thread(() -> serve(server, rounds, streamBytes), "bench-server");
            echo.setDaemon(true);
            echo.start();
            try (Socket s = new Socket(address, port)) {
                s.setTcpNoDelay(true);
                String path = pathOf(s);
                rtt(s, path, rounds);
                stream(s, path, streamBytes);
            }
            echo.join(600_000);
        }
    }

    private static void rtt(Socket s, String path, int rounds) throws IOException {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        byte[] buf = new byte[SIZE];
        int warm = Math.max(200, rounds);
        for (int i = 0; i < warm; i++) {
            out.write(buf);
            readFully(in, buf);
        }
        long[] t = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            out.write(buf);
            readFully(in, buf);
            t[i] = System.nanoTime() - t0;
        }
        Arrays.sort(t);
        System.out.printf(Locale.ROOT, "rtt path=%s size=%d median_us=%.1f p99_us=%.1f min_us=%.1f n=%d%n", path, SIZE,
                t[rounds / 2] / 1e3, t[(int) (rounds * 0.99)] / 1e3, t[0] / 1e3, rounds);
    }

    private static void stream(Socket s, String path, long bytes) throws IOException {
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[CHUNK];
        long t0 = System.nanoTime();
        for (long sent = 0; sent < bytes; sent += CHUNK) {
            out.write(buf);
        }
        if (in.read() != 1) throw new IOException("no end-of-stream acknowledgement");
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "stream path=%s write=%d MiB=%d MB_per_s=%.1f%n", path, CHUNK, bytes >> 20,
                bytes / 1e6 / secs);
    }

    private static void serve(ServerSocket server, int rounds, long streamBytes) {
        try (Socket s = server.accept()) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[SIZE];
            for (int i = 0, n = Math.max(200, rounds) + rounds; i < n; i++) {
                readFully(in, buf);
                out.write(buf);
            }
            byte[] sink = new byte[CHUNK];
            for (long got = 0; got < streamBytes; ) {
                int n = in.read(sink);
                if (n < 0) throw new IOException("EOF after " + got);
                got += n;
            }
            out.write(1);
        } catch (IOException e) {
            System.out.println("bench server failed: " + e);
        }
    }

    private static void readFully(InputStream in, byte[] buf) throws IOException {
        for (int off = 0; off < buf.length; ) {
            int n = in.read(buf, off, buf.length - off);
            if (n < 0) throw new IOException("EOF");
            off += n;
        }
    }

    private static String pathOf(Socket s) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            return (String) bridge.getMethod("pathOf", Socket.class).invoke(null, s);
        } catch (ReflectiveOperationException e) {
            return "tcp(no agent)";
        }
    }
}
