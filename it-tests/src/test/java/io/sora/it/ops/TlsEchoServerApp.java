package io.sora.it.ops;

import io.sora.it.apps.TlsApp;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * For {@code HotAttachTlsIT}: a TLS echo server on an {@code SSLServerSocket} (the JDK's), started without
 * the agent: it binds, prints {@code READY}, then accepts {@code <connections>} connections, echoing 4 KiB
 * messages on each until its client closes. Arguments: port, connections, key store directory.
 */
public final class TlsEchoServerApp {
    private TlsEchoServerApp() {
    }

    public static void main(String[] args) throws Exception {
        int connections = Integer.parseInt(args[1]);
        var ctx = TlsApp.context(Path.of(args[2]));
        try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory()
                .createServerSocket(Integer.parseInt(args[0]), 50, InetAddress.getLoopbackAddress())) {
            System.out.println("READY");
            for (int i = 0; i < connections; i++) {
                SSLSocket s = (SSLSocket) server.accept();
                Thread t = new Thread(() -> echo(s), "echo-" + i);
                t.start();
                if (i == connections - 1) t.join(120_000);
            }
        }
    }

    private static void echo(Socket s) {
        try (s) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] b = new byte[4096];
            while (true) {
                in.readFully(b);
                s.getOutputStream().write(b);
            }
        } catch (IOException e) {
            // the client closed
        }
    }
}
