package io.sora.it.ops;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A long-running server for the operator-tool tests, started WITHOUT the agent: binds address:port,
 * prints {@code READY}, then accepts any number of clients and echoes each until it closes. Exits 0 at
 * the deadline (so a test that dies never leaves it behind).
 *
 * <p>Arguments: {@code <port> <deadline seconds> [<address>, default 127.0.0.1]}.
 */
public final class EchoServerApp {
    private EchoServerApp() {
    }

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        exitAtDeadline(Long.parseLong(args[1]));
        String address = args.length > 2 ? args[2] : "127.0.0.1";
        try (ServerSocket server = new ServerSocket(port, 50, InetAddress.getByName(address))) {
            System.out.println("READY");
            serve(server);
        }
    }

    /** Prints {@code DEADLINE} and exits 0 after {@code seconds}, so a test that dies never leaves the app behind. */
    static void exitAtDeadline(long seconds) {
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(seconds * 1000L);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("DEADLINE");
            System.exit(0);
        }, "deadline");
        killer.setDaemon(true);
        killer.start();
    }

    /** Accepts clients for ever, echoing each on a thread of its own. */
    static void serve(ServerSocket server) throws IOException {
        for (int n = 1; ; n++) {
            Socket s = server.accept();
            Thread t = new Thread(() -> echo(s), "echo-" + n);
            t.setDaemon(true);
            t.start();
        }
    }

    /** Streams are taken once, as real servers do; they stay valid across a detach. */
    private static void echo(Socket s) {
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            byte[] buf = new byte[8192];
            for (int r = in.read(buf); r >= 0; r = in.read(buf)) {
                out.write(buf, 0, r);
            }
        } catch (IOException e) {
            // the client went away
        }
    }
}
