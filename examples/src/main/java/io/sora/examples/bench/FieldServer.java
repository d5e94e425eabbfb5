package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The field benchmark's server child: accepts {@code conns} connections and serves each on its own
 * thread, echoing every {@code size}-byte message until the client closes; then checks the
 * socket's path (after the traffic, so nothing runs before the first round trip that a user's
 * server would not run) and prints {@code DONE served=N}, the round trips it echoed in all.
 * No {@code TCP_NODELAY}: sockets as an application gets them.
 *
 * <pre>FieldServer address=IP port=N size=N conns=N path=tcp|shm agent=yes|no timeout=S</pre>
 */
public final class FieldServer {
    private FieldServer() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        ChildArgs a = ChildArgs.parse("FieldServer", args);
        a.startWatchdog();
        int size = a.getInt("size");
        int conns = a.getInt("conns");
        if (size < Wire.MIN_SIZE || conns < 1) {
            a.fail("need size >= " + Wire.MIN_SIZE + " and conns >= 1, got size=" + size + " conns=" + conns);
        }
        AtomicLong served = new AtomicLong();
        Thread[] threads = new Thread[conns];
        try (ServerSocket server = new ServerSocket(a.getInt("port"), 64, InetAddress.getByName(a.get("address")))) {
            System.out.println("READY port=" + server.getLocalPort());
            System.out.flush();
            for (int c = 0; c < conns; c++) {
                Socket socket = server.accept();
                int id = c;
                threads[c] = new Thread(() -> serve(a, socket, size, id, served), "field-server-" + c);
                threads[c].start();
            }
            for (Thread t : threads) {
                t.join();
            }
        }
        System.out.println("DONE served=" + served.get());
    }

    private static void serve(ChildArgs a, Socket socket, int size, int id, AtomicLong served) {
        long n = 0;
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] buf = new byte[size];
            while (readMessage(a, in, buf, id, n)) {
                out.write(buf, 0, size);
                out.flush();
                n++;
            }
            a.checkPath(socket);
        } catch (IOException e) {
            a.fail("connection " + id + " after " + n + " round trips: " + e);
        }
        served.addAndGet(n);
    }

    /** Reads one whole message; false on a clean end (EOF before its first byte), fails on EOF inside one. */
    private static boolean readMessage(ChildArgs a, InputStream in, byte[] buf, int id, long n) throws IOException {
        int off = 0;
        while (off < buf.length) {
            int r = in.read(buf, off, buf.length - off);
            if (r < 0) {
                if (off == 0) {
                    return false;
                }
                a.fail("connection " + id + ": the client closed inside message " + n + " after " + off + " of "
                        + buf.length + " bytes");
            }
            off += r;
        }
        return true;
    }
}
