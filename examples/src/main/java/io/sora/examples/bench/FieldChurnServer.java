package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The server child of the field benchmark's {@code setup} row: accepts {@code n} connections one after
 * another; on each reads one byte, answers one byte, waits for the client's close (EOF), checks the
 * socket's path ({@link ChildArgs#checkPath}) and closes it. Prints {@code DONE served=N}. With
 * {@code server=selector}, a selector server does the same (non-blocking accept, reads and close on one
 * thread), as Netty, Undertow or Jetty serve connections.
 *
 * <pre>FieldChurnServer address=IP port=N n=N path=tcp|shm agent=yes|no timeout=S [server=blocking|selector]</pre>
 */
public final class FieldChurnServer {
    private FieldChurnServer() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FieldChurnServer", args);
        a.startWatchdog();
        int n = a.getInt("n");
        if (a.has("server") && a.get("server").equals("selector")) {
            System.out.println("DONE served=" + selector(a, n));
            return;
        }
        int served = 0;
        try (ServerSocket server = new ServerSocket(a.getInt("port"), 64, InetAddress.getByName(a.get("address")))) {
            System.out.println("READY port=" + server.getLocalPort());
            System.out.flush();
            for (int i = 0; i < n; i++) {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    int b = in.read();
                    if (b != (i & 0x7f)) {
                        a.fail("connection " + i + ": read " + b + ", expected " + (i & 0x7f));
                    }
                    s.getOutputStream().write(b ^ 0x55);
                    if (in.read() != -1) {
                        a.fail("connection " + i + ": a byte after the request, expected the client's close");
                    }
                    a.checkPath(s);
                    served++;
                }
            }
        }
        System.out.println("DONE served=" + served);
    }

    /** The same with a selector: each connection's request read, answered, and its close awaited on one thread. */
    private static int selector(ChildArgs a, int n) throws IOException {
        int served = 0;
        try (java.nio.channels.Selector sel = java.nio.channels.Selector.open();
             java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open()) {
            server.bind(new java.net.InetSocketAddress(InetAddress.getByName(a.get("address")), a.getInt("port")), 64);
            server.configureBlocking(false);
            server.register(sel, java.nio.channels.SelectionKey.OP_ACCEPT);
            System.out.println("READY port=" + server.socket().getLocalPort());
            System.out.flush();
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(16);
            int accepted = 0;
            while (served < n) {
                sel.select();
                for (java.util.Iterator<java.nio.channels.SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                    java.nio.channels.SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) continue;
                    if (k.isAcceptable()) {
                        java.nio.channels.SocketChannel c;
                        while ((c = server.accept()) != null) {
                            c.configureBlocking(false);
                            c.register(sel, java.nio.channels.SelectionKey.OP_READ, new int[] {accepted++, 0});
                        }
                        continue;
                    }
                    java.nio.channels.SocketChannel c = (java.nio.channels.SocketChannel) k.channel();
                    int[] state = (int[]) k.attachment(); // the connection's number, and whether it was answered
                    buf.clear();
                    int r = c.read(buf);
                    if (r == 0) continue;
                    if (r < 0) {
                        if (state[1] == 0) a.fail("connection " + state[0] + ": closed before its request");
                        a.checkPath(c);
                        k.cancel();
                        c.close();
                        served++;
                        continue;
                    }
                    if (state[1] != 0 || r != 1 || buf.get(0) != (byte) (state[0] & 0x7f)) {
                        a.fail("connection " + state[0] + ": read " + r + " bytes, expected its one request byte");
                    }
                    state[1] = 1;
                    c.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) (buf.get(0) ^ 0x55)}));
                }
            }
        }
        return served;
    }
}
