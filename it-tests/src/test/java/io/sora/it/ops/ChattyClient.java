package io.sora.it.ops;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client driven through stdin, for the operator-tool tests: {@code open} opens one more connection to
 * address:port whose thread then sends 1 KiB and reads its echo back, over and over, checking every
 * byte (a wrong byte prints {@code MISMATCH} and exits 3); {@code count N} prints
 * {@code COUNT N <round trips so far>}; {@code close N} closes connection N and prints {@code CLOSED N};
 * {@code quit} closes everything and exits 0. Exits 4 at the deadline.
 *
 * <p>Arguments: {@code <port> <deadline seconds> [<address>, default 127.0.0.1]}.
 */
public final class ChattyClient {
    private static final List<AtomicLong> COUNTS = new CopyOnWriteArrayList<>();
    private static final List<Socket> SOCKETS = new CopyOnWriteArrayList<>();

    private ChattyClient() {
    }

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        long deadlineMillis = Long.parseLong(args[1]) * 1000L;
        String address = args.length > 2 ? args[2] : "127.0.0.1";
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(deadlineMillis);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("DEADLINE");
            System.exit(4);
        }, "deadline");
        killer.setDaemon(true);
        killer.start();
        System.out.println("READY");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = commands.readLine(); line != null; line = commands.readLine()) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "open" -> open(address, port);
                case "count" -> System.out.println("COUNT " + w[1] + " " + COUNTS.get(Integer.parseInt(w[1]) - 1).get());
                case "close" -> {
                    SOCKETS.get(Integer.parseInt(w[1]) - 1).close();
                    System.out.println("CLOSED " + w[1]);
                }
                case "quit" -> {
                    for (Socket s : SOCKETS) {
                        s.close();
                    }
                    System.out.println("BYE");
                    System.exit(0);
                }
                default -> System.out.println("UNKNOWN " + line);
            }
        }
    }

    private static void open(String address, int port) throws IOException {
        Socket s = new Socket(address, port);
        AtomicLong count = new AtomicLong();
        SOCKETS.add(s);
        COUNTS.add(count);
        int n = COUNTS.size();
        Thread t = new Thread(() -> chat(s, count), "chat-" + n);
        t.setDaemon(true);
        t.start();
        System.out.println("OPENED " + n + " " + s.getLocalPort());
    }

    private static void chat(Socket s, AtomicLong count) {
        byte[] sent = new byte[1024];
        byte[] back = new byte[1024];
        Random random = new Random(s.getLocalPort());
        try {
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            while (!s.isClosed()) {
                random.nextBytes(sent);
                out.write(sent);
                in.readFully(back);
                if (!java.util.Arrays.equals(sent, back)) {
                    System.out.println("MISMATCH on " + s);
                    System.exit(3);
                }
                count.incrementAndGet();
                Thread.sleep(5);
            }
        } catch (IOException | InterruptedException e) {
            if (!s.isClosed()) {
                System.out.println("FAILED " + s + " " + e);
            }
        }
    }
}
