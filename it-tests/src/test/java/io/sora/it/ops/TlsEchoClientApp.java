package io.sora.it.ops;

import io.sora.it.apps.TlsApp;
import java.io.DataInputStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import javax.net.ssl.SSLSocket;

/**
 * For {@code HotAttachTlsIT}: one TLS connection (an {@code SSLSocket} made with a host and port), 500 round
 * trips of 4 KiB random bytes, each checked; prints {@code OK <local port>}. Arguments: port, key store
 * directory (the server's: its key is trusted).
 */
public final class TlsEchoClientApp {
    private TlsEchoClientApp() {
    }

    public static void main(String[] args) throws Exception {
        var ctx = TlsApp.context(Path.of(args[1]));
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0]))) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] b = new byte[4096];
            byte[] r = new byte[4096];
            Random random = new Random(s.getLocalPort());
            for (int i = 0; i < 500; i++) {
                random.nextBytes(b);
                s.getOutputStream().write(b);
                in.readFully(r);
                if (!Arrays.equals(b, r)) throw new IllegalStateException("round trip " + i + ": the echo differs");
            }
            System.out.println("OK " + s.getLocalPort());
        }
    }
}
