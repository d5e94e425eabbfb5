package io.sora.it.reliability.apps;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code <port> <holdMillis>}: accepts three connections one after another, on each reads one byte and
 * echoes it. After the first, it opens {@code /dev/null} until the process is out of file descriptors,
 * prints {@code EXHAUSTED files=<n>}, holds them {@code holdMillis} (the window in which the next client
 * connects), closes them and prints {@code RELEASED}. Prints {@code PATHS <p1> <p2> <p3>} at the end.
 */
public final class FdExhaustServer {
    private FdExhaustServer() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        long hold = Long.parseLong(args[1]);
        List<String> paths = new ArrayList<>();
        try (ServerSocket ss = new ServerSocket(port, 50, Apps.LOOPBACK)) {
            System.out.println("READY");
            for (int i = 0; i < 3; i++) {
                try (Socket s = ss.accept()) {
                    InputStream in = s.getInputStream();
                    int b = in.read();
                    s.getOutputStream().write(b);
                    paths.add(Apps.path(s));
                    if (in.read() != -1) throw new IllegalStateException("expected the client's close");
                }
                if (i == 0) exhaust(hold);
            }
        }
        System.out.println("PATHS " + String.join(" ", paths));
    }

    private static void exhaust(long holdMillis) throws InterruptedException {
        List<FileInputStream> files = new ArrayList<>();
        try {
            for (int i = 0; i < 1_000_000; i++) {
                try {
                    files.add(new FileInputStream("/dev/null"));
                } catch (IOException e) {
                    break; // out of descriptors
                }
            }
            System.out.println("EXHAUSTED files=" + files.size());
            Thread.sleep(holdMillis); // the window under test, not a wait for a condition
        } finally {
            for (FileInputStream f : files) {
                try {
                    f.close();
                } catch (IOException e) {
                    // closing /dev/null
                }
            }
        }
        System.out.println("RELEASED");
    }
}
