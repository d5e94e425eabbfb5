package io.sora.it.ops;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
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
        EchoServerApp.exitAtDeadline(Long.parseLong(args[1]));
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
            EchoServerApp.serve(server);
        }
    }
}
