package io.sora.it.ops;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A server started WITHOUT the agent that binds 127.0.0.1:port, prints {@code READY}, and on the line
 * {@code rebind} on its standard input closes that server socket (never having accepted on it) and binds a
 * new one on the same port, prints {@code REBOUND}, then accepts and echoes each client until it closes
 * (an application restarting its listener). Exits 0 at the deadline.
 *
 * <p>Arguments: {@code <port> <deadline seconds>}.
 */
public final class RebindServerApp {
    private RebindServerApp() {
    }

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        long deadlineMillis = Long.parseLong(args[1]) * 1000L;
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(deadlineMillis);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("DEADLINE");
            System.exit(0);
        }, "deadline");
        killer.setDaemon(true);
        killer.start();
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        ServerSocket first = new ServerSocket(port, 50, loopback);
        System.out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("rebind"); line = in.readLine()) {
            // only "rebind" is a command
        }
        first.close();
        try (ServerSocket server = new ServerSocket(port, 50, loopback)) {
            System.out.println("REBOUND");
            for (int n = 1; ; n++) {
                Socket s = server.accept();
                Thread t = new Thread(() -> echo(s), "echo-" + n);
                t.setDaemon(true);
                t.start();
            }
        }
    }

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
