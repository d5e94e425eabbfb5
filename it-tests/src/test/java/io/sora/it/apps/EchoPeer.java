package io.sora.it.apps;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A small application for the fallback matrix. {@code server <port> <first>} or
 * {@code client <port> <first>}, where {@code first} says which side speaks first
 * ({@code server}-first protocols like SMTP, {@code client}-first like HTTP). Each side sends a
 * greeting of known bytes, then the client sends 1 MiB and the server answers with its SHA-256; the
 * exact bytes each side received are checked, so a single stray byte fails the run. Prints
 * {@code PATH <path>} (asked from the agent's bridge when present) and {@code OK}. A fourth argument
 * {@code channel} makes that side use blocking socket channels instead of sockets (a channel on one end
 * and a socket on the other are the same TCP connection to the peer).
 */
public final class EchoPeer {
    private static final byte[] CLIENT_HELLO = "HELLO FROM CLIENT\n".getBytes();
    private static final byte[] SERVER_HELLO = "220 HELLO FROM SERVER\n".getBytes();

    private EchoPeer() {
    }

    public static void main(String[] args) throws Exception {
        boolean server = args[0].equals("server");
        int port = Integer.parseInt(args[1]);
        boolean serverFirst = args[2].equals("server");
        if (args.length > 3 && args[3].equals("channel")) {
            channels(server, port, serverFirst, args.length > 4 && args[4].equals("linger"));
            System.out.println("OK");
            return;
        }
        if (server) {
            try (ServerSocket ss = new ServerSocket(port, 5, InetAddress.getLoopbackAddress())) {
                System.out.println("READY");
                try (Socket s = ss.accept()) {
                    System.out.println("PATH " + path(s));
                    run(s, true, serverFirst);
                }
            }
        } else {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                System.out.println("PATH " + path(s));
                run(s, false, serverFirst);
            }
        }
        System.out.println("OK");
    }

    /**
     * The same exchange over blocking socket channels (their own read and write, through
     * {@code java.nio.channels.Channels}' streams), for the matrix's mixes of channels and sockets.
     */
    private static void channels(boolean server, int port, boolean serverFirst, boolean linger) throws Exception {
        java.net.InetSocketAddress at = new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        if (server) {
            try (java.nio.channels.ServerSocketChannel ss = java.nio.channels.ServerSocketChannel.open()) {
                ss.bind(at, 5);
                System.out.println("READY");
                try (java.nio.channels.SocketChannel ch = ss.accept()) {
                    System.out.println("PATH " + channelPath(ch));
                    exchange(java.nio.channels.Channels.newInputStream(ch), java.nio.channels.Channels.newOutputStream(ch),
                            () -> ch.shutdownOutput(), true, serverFirst);
                }
            }
        } else {
            try (java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(at)) {
                System.out.println("PATH " + channelPath(ch));
                if (linger) awaitAgent(); // the connection open, as a pool's is, until the agent's start is over
                exchange(java.nio.channels.Channels.newInputStream(ch), java.nio.channels.Channels.newOutputStream(ch),
                        () -> ch.shutdownOutput(), false, serverFirst);
            }
        }
    }

    /**
     * Waits until the agent's start is over (its JMX bean registered, which the agent does last; asking
     * for the platform MBean server is what registers it), at most 10 s: a peer that ends sooner leaves
     * the start unfinished.
     */
    private static void awaitAgent() throws Exception {
        javax.management.ObjectName name = new javax.management.ObjectName("io.sora:type=Connections");
        javax.management.MBeanServer mbeans = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!mbeans.isRegistered(name) && System.nanoTime() < deadline) Thread.sleep(5);
        System.out.println(mbeans.isRegistered(name) ? "AGENT UP" : "AGENT NOT UP");
    }

    /** As {@link #path}: "tcp" in a JVM without the agent too. */
    private static String channelPath(java.nio.channels.SocketChannel ch) {
        String p = BridgePath.of(ch);
        return p.equals("no-agent") ? "tcp" : p;
    }

    private interface Shutdown {
        void run() throws IOException;
    }

    private static void run(Socket s, boolean server, boolean serverFirst) throws Exception {
        s.setSoTimeout(20_000);
        exchange(s.getInputStream(), s.getOutputStream(), s::shutdownOutput, server, serverFirst);
    }

    private static void exchange(InputStream in, OutputStream out, Shutdown shutdownOutput, boolean server,
                                 boolean serverFirst) throws Exception {
        byte[] mine = server ? SERVER_HELLO : CLIENT_HELLO;
        byte[] theirs = server ? CLIENT_HELLO : SERVER_HELLO;
        boolean meFirst = server == serverFirst;
        if (meFirst) {
            out.write(mine);
            expect(in, theirs);
        } else {
            expect(in, theirs);
            out.write(mine);
        }
        byte[] payload = new byte[1 << 20];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 131 + 17);
        }
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(payload);
        if (server) {
            byte[] got = new byte[payload.length];
            new DataInputStream(in).readFully(got);
            out.write(MessageDigest.getInstance("SHA-256").digest(got));
        } else {
            out.write(payload);
            byte[] answer = new byte[32];
            new DataInputStream(in).readFully(answer);
            if (!Arrays.equals(digest, answer)) {
                throw new IOException("server saw different bytes: " + HexFormat.of().formatHex(answer));
            }
        }
        shutdownOutput.run();
        int extra = in.read();
        if (extra != -1) {
            throw new IOException("unexpected byte after the exchange: " + extra);
        }
    }

    private static void expect(InputStream in, byte[] expected) throws IOException {
        byte[] got = new byte[expected.length];
        new DataInputStream(in).readFully(got);
        if (!Arrays.equals(expected, got)) {
            throw new IOException("expected '" + new String(expected).trim() + "' got '" + new String(got) + "'");
        }
    }

    private static String path(Socket s) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            return (String) bridge.getMethod("pathOf", Socket.class).invoke(null, s);
        } catch (ReflectiveOperationException e) {
            return "tcp";
        }
    }
}
