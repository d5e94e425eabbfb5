package io.sora.it.apps;

import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * For {@code TlsSocketsIT}: connections between two threads of this JVM over loopback, every byte checked.
 * {@code DIRECT}: an {@code SSLServerSocket} and an {@code SSLSocket} made with a host and port (the JDK's TLS
 * sockets, which sora pairs). {@code LAYERED}: a plain {@code ServerSocket} and {@code Socket}, with TLS
 * layered on each end once connected (as JDBC drivers and STARTTLS protocols do). {@code SUBCLASS}: the
 * application's own subclasses of {@code Socket} and {@code ServerSocket} (its server socket's accept its
 * own, through {@code implAccept}), which sora does not pair. Prints {@code DIRECT|LAYERED|SUBCLASS <port>
 * <client local port> ok}, then the sora bean's {@code UnservedApis} as {@code UNSERVED <text>} lines (or
 * {@code NO BEAN}).
 *
 * <p>Argument: a directory for the key store it makes with the running JDK's {@code keytool}.
 */
public final class TlsApp {
    private static final int ROUNDS = 200;

    private TlsApp() {
    }

    public static void main(String[] args) throws Exception {
        SSLContext ctx = context(Path.of(args[0]));
        InetAddress loopback = InetAddress.getLoopbackAddress();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50, loopback)) {
                Future<?> served = pool.submit(() -> {
                    try (SSLSocket s = (SSLSocket) server.accept()) {
                        echo(s);
                    }
                    return null;
                });
                try (SSLSocket c = (SSLSocket) ctx.getSocketFactory().createSocket(loopback, server.getLocalPort())) {
                    exchange(c);
                    System.out.println("DIRECT " + server.getLocalPort() + " " + c.getLocalPort() + " ok");
                }
                served.get(60, TimeUnit.SECONDS);
            }
            try (ServerSocket server = new ServerSocket(0, 50, loopback)) {
                Future<?> served = pool.submit(() -> {
                    try (Socket plain = server.accept();
                         SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(plain, null, plain.getPort(), true)) {
                        s.setUseClientMode(false);
                        echo(s);
                    }
                    return null;
                });
                Socket plain = new Socket(loopback, server.getLocalPort());
                try (SSLSocket c = (SSLSocket) ctx.getSocketFactory().createSocket(plain, "127.0.0.1", server.getLocalPort(), true)) {
                    exchange(c);
                    System.out.println("LAYERED " + server.getLocalPort() + " " + plain.getLocalPort() + " ok");
                }
                served.get(60, TimeUnit.SECONDS);
            }
            // an application's own subclasses of Socket and ServerSocket: not served (said), every byte still exact
            try (ServerSocket server = new AppServerSocket(loopback)) {
                Future<?> served = pool.submit(() -> {
                    try (Socket s = server.accept()) {
                        plainEcho(s);
                    }
                    return null;
                });
                try (Socket c = new AppSocket()) {
                    c.connect(new java.net.InetSocketAddress(loopback, server.getLocalPort()));
                    plainExchange(c);
                    System.out.println("SUBCLASS " + server.getLocalPort() + " " + c.getLocalPort() + " ok");
                }
                served.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        ObjectName name = new ObjectName("io.sora:type=Connections");
        var mbeans = ManagementFactory.getPlatformMBeanServer();
        if (!mbeans.isRegistered(name)) {
            System.out.println("NO BEAN");
            return;
        }
        for (String s : (String[]) mbeans.getAttribute(name, "UnservedApis")) System.out.println("UNSERVED " + s);
    }

    /**
     * A TLSv1.3 context whose key (EC, for CN=localhost and the address 127.0.0.1) is made in {@code dir} with
     * the running JDK's {@code keytool} (or, made there already by another process, read), and trusted.
     */
    public static SSLContext context(Path dir) throws Exception {
        Path store = dir.resolve("tls.p12");
        if (!Files.exists(store)) makeKey(store);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, "secret".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
        kmf.init(ks, "secret".toCharArray());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    private static void makeKey(Path store) throws Exception {
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "s", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "secret",
                "-keypass", "secret", "-ext", "SAN=ip:127.0.0.1").redirectErrorStream(true).start();
        byte[] out = keytool.getInputStream().readAllBytes();
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + new String(out));
        }
    }

    /** An application's socket class (its own, for what it adds: here nothing). */
    static final class AppSocket extends Socket {
    }

    /** An application's server socket class, with an accept of its own that takes the connection itself. */
    static final class AppServerSocket extends ServerSocket {
        AppServerSocket(InetAddress address) throws java.io.IOException {
            super(0, 50, address);
        }

        @Override
        public Socket accept() throws java.io.IOException {
            Socket s = new AppSocket();
            implAccept(s);
            return s;
        }
    }

    private static void plainEcho(Socket s) throws Exception {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] b = new byte[4096];
        for (int i = 0; i < ROUNDS; i++) {
            in.readFully(b);
            s.getOutputStream().write(b);
        }
    }

    private static void plainExchange(Socket c) throws Exception {
        DataInputStream in = new DataInputStream(c.getInputStream());
        byte[] b = new byte[4096];
        byte[] r = new byte[4096];
        Random random = new Random(12);
        for (int i = 0; i < ROUNDS; i++) {
            random.nextBytes(b);
            c.getOutputStream().write(b);
            in.readFully(r);
            if (!Arrays.equals(b, r)) throw new IllegalStateException("round trip " + i + ": the echo differs");
        }
    }

    private static void echo(SSLSocket s) throws Exception {
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        byte[] b = new byte[4096];
        for (int i = 0; i < ROUNDS; i++) {
            in.readFully(b);
            out.write(b);
            out.flush();
        }
    }

    private static void exchange(SSLSocket c) throws Exception {
        c.startHandshake();
        DataInputStream in = new DataInputStream(c.getInputStream());
        OutputStream out = c.getOutputStream();
        byte[] b = new byte[4096];
        byte[] r = new byte[4096];
        Random random = new Random(11);
        for (int i = 0; i < ROUNDS; i++) {
            random.nextBytes(b);
            out.write(b);
            out.flush();
            in.readFully(r);
            if (!Arrays.equals(b, r)) throw new IllegalStateException("round trip " + i + ": the echo differs");
        }
    }
}
