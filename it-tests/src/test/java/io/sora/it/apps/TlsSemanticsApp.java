package io.sora.it.apps;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * For {@code TlsSemanticsIT}: the JDK's own TLS sockets ({@code SSLServerSocket}, {@code SSLSocket} made with
 * a host and port, {@code HttpsURLConnection}) through a set of cases whose outcomes are printed one line
 * each, so that a run over TCP (no agent) and a run through the agent can be compared line for line. Every
 * wait is bounded; a case that fails prints its exception, it does not end the run.
 *
 * <p>Argument: a directory for the key store ({@link TlsApp#context}). Last line: {@code CONNECTIONS <n>},
 * the connections its server sockets accepted.
 */
public final class TlsSemanticsApp {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final AtomicInteger ACCEPTED = new AtomicInteger();
    private static SSLContext ctx;
    private static ExecutorService pool;

    private TlsSemanticsApp() {
    }

    public static void main(String[] args) throws Exception {
        ctx = TlsApp.context(Path.of(args[0]));
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "tls-server");
            t.setDaemon(true);
            return t;
        });
        try {
            run("echo", TlsSemanticsApp::echo);
            run("bulk-then-half-close", TlsSemanticsApp::bulk);
            run("read-timeout-then-usable", TlsSemanticsApp::timeout);
            run("peer-close-wakes-a-blocked-read", TlsSemanticsApp::peerCloseWakesRead);
            run("client-close-seen-by-server", TlsSemanticsApp::clientClose);
            run("abortive-close", TlsSemanticsApp::abortive);
            run("writes-after-peer-close", TlsSemanticsApp::writesAfterPeerClose);
            run("writes-after-peer-close-unread", TlsSemanticsApp::writesAfterPeerCloseUnread);
            run("https-keep-alive", TlsSemanticsApp::https);
        } finally {
            pool.shutdownNow();
        }
        System.out.println("CONNECTIONS " + ACCEPTED.get());
    }

    private static void run(String name, Callable<String> c) {
        String outcome;
        try {
            outcome = c.call();
        } catch (Exception e) {
            outcome = "FAILED " + describe(e);
        }
        System.out.println(name + ": " + outcome);
    }

    /** What the next one-byte read of {@code s} gives: the byte or -1, or the exception it throws. */
    private static String nextRead(Socket s) {
        try {
            return String.valueOf(s.getInputStream().read());
        } catch (IOException e) {
            return describe(e);
        }
    }

    private static String describe(Throwable e) {
        return e.getClass().getName() + ": " + e.getMessage();
    }

    /** A server socket, one connection, served by {@code serve} on a pool thread; the client's part runs here. */
    private interface Serve {
        String serve(SSLSocket s) throws Exception;
    }

    private interface Client {
        String run(SSLSocket c, Future<String> server) throws Exception;
    }

    private static String pair(Serve serve, Client client) throws Exception {
        try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50, LOOPBACK)) {
            Future<String> served = pool.submit(() -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    ACCEPTED.incrementAndGet();
                    return serve.serve(s);
                }
            });
            try (SSLSocket c = (SSLSocket) ctx.getSocketFactory().createSocket(LOOPBACK, server.getLocalPort())) {
                String mine = client.run(c, served);
                return mine + " | server: " + outcome(served);
            }
        }
    }

    private static String outcome(Future<String> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return "threw " + describe(e.getCause());
        } catch (Exception e) {
            return "no outcome: " + describe(e);
        }
    }

    /** 200 round trips of 4 KiB, random, each checked. */
    private static String echo() throws Exception {
        return pair(s -> {
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] b = new byte[4096];
            for (int i = 0; i < 200; i++) {
                in.readFully(b);
                s.getOutputStream().write(b);
            }
            return "echoed 200";
        }, (c, served) -> {
            DataInputStream in = new DataInputStream(c.getInputStream());
            byte[] b = new byte[4096];
            byte[] r = new byte[4096];
            Random random = new Random(1);
            for (int i = 0; i < 200; i++) {
                random.nextBytes(b);
                c.getOutputStream().write(b);
                in.readFully(r);
                if (!Arrays.equals(b, r)) return "round trip " + i + " differs";
            }
            return "200 exact";
        });
    }

    /** 4 MiB one way, the client's output shut down (TLS 1.3's half-close), the server's checksum back. */
    private static String bulk() throws Exception {
        return pair(s -> {
            InputStream in = s.getInputStream();
            CRC32 crc = new CRC32();
            byte[] b = new byte[65536];
            long total = 0;
            for (int n; (n = in.read(b)) >= 0; ) {
                crc.update(b, 0, n);
                total += n;
            }
            s.getOutputStream().write((total + " " + Long.toHexString(crc.getValue()) + "\n").getBytes(StandardCharsets.US_ASCII));
            return "read " + total + " then the end";
        }, (c, served) -> {
            byte[] data = new byte[4 << 20];
            new Random(2).nextBytes(data);
            CRC32 crc = new CRC32();
            crc.update(data);
            OutputStream out = c.getOutputStream();
            for (int off = 0; off < data.length; off += 100_000) out.write(data, off, Math.min(100_000, data.length - off));
            c.shutdownOutput();
            String answer = new String(c.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
            return (answer.equals(data.length + " " + Long.toHexString(crc.getValue())) ? "checksum matches" : "checksum differs: " + answer)
                    + ", output shut " + c.isOutputShutdown();
        });
    }

    /** A read with SO_TIMEOUT on an idle connection times out; the connection stays usable. */
    private static String timeout() throws Exception {
        return pair(s -> {
            int b = s.getInputStream().read();
            s.getOutputStream().write(b + 1);
            return "got " + b;
        }, (c, served) -> {
            c.startHandshake();
            c.setSoTimeout(200);
            String first;
            try {
                first = "read " + c.getInputStream().read();
            } catch (SocketTimeoutException e) {
                first = describe(e);
            }
            c.setSoTimeout(30_000);
            c.getOutputStream().write(41);
            return first + "; then " + c.getInputStream().read();
        });
    }

    /** The server closes while the client is blocked in a read: what the read returns. */
    private static String peerCloseWakesRead() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        return pair(s -> {
            s.getOutputStream().write(7);
            if (!reading.await(30, TimeUnit.SECONDS)) return "client never read";
            Thread.sleep(100); // let the client's second read block (either outcome is checked: it must end)
            s.close();
            return "closed";
        }, (c, served) -> {
            c.setSoTimeout(30_000);
            int first = c.getInputStream().read();
            reading.countDown();
            String second = nextRead(c);
            return "read " + first + ", then " + second;
        });
    }

    /** The client closes; the server's read sees the end, and the server's own close then is quiet. */
    private static String clientClose() throws Exception {
        return pair(s -> {
            s.setSoTimeout(30_000);
            int b = s.getInputStream().read();
            String next = nextRead(s);
            return "read " + b + ", then " + next;
        }, (c, served) -> {
            c.getOutputStream().write(9);
            c.close();
            return "closed " + c.isClosed();
        });
    }

    /** The server closes abortively (SO_LINGER 0) once the client has its byte: the client's next read. */
    private static String abortive() throws Exception {
        CountDownLatch gotIt = new CountDownLatch(1);
        CountDownLatch aborted = new CountDownLatch(1);
        return pair(s -> {
            s.getOutputStream().write(5);
            if (!gotIt.await(30, TimeUnit.SECONDS)) return "client never read";
            s.setSoLinger(true, 0);
            s.close();
            aborted.countDown();
            return "aborted";
        }, (c, served) -> {
            c.setSoTimeout(30_000);
            int first = c.getInputStream().read();
            gotIt.countDown();
            if (!aborted.await(30, TimeUnit.SECONDS)) return "server never aborted";
            Thread.sleep(100); // the reset travels (loopback: at once; the fast path: its flag)
            String second = nextRead(c);
            return "read " + first + ", then " + second;
        });
    }

    /** The server closes; the client, having read the end, writes twice. */
    private static String writesAfterPeerClose() throws Exception {
        return pair(s -> {
            s.startHandshake();
            s.close();
            return "closed";
        }, (c, served) -> {
            c.setSoTimeout(30_000);
            String end = String.valueOf(c.getInputStream().read());
            String server = outcome(served);
            StringBuilder writes = new StringBuilder();
            for (int i = 0; i < 2; i++) {
                try {
                    c.getOutputStream().write(new byte[100]);
                    writes.append(" taken");
                } catch (IOException e) {
                    writes.append(' ').append(describe(e));
                }
            }
            return "read " + end + " (server " + server + "), writes:" + writes;
        });
    }

    /**
     * The server closes; the client, not having read its close, writes 100 bytes, then 1 MiB: records on a
     * connection the peer closed (over TCP the first is taken, the peer's kernel answers with a reset).
     */
    private static String writesAfterPeerCloseUnread() throws Exception {
        return pair(s -> {
            s.startHandshake();
            s.close();
            return "closed";
        }, (c, served) -> {
            c.startHandshake();
            String server = outcome(served);
            Thread.sleep(100); // the close travels
            StringBuilder writes = new StringBuilder();
            for (int size : new int[] {100, 1 << 20}) {
                try {
                    c.getOutputStream().write(new byte[size]);
                    writes.append(" taken");
                } catch (IOException e) {
                    writes.append(' ').append(describe(e));
                }
            }
            String read = nextRead(c);
            return "server " + server + ", writes:" + writes + ", then read " + read;
        });
    }

    /** HttpsURLConnection: 20 GETs, kept alive, against an HTTP/1.1 server on an SSLServerSocket. */
    private static String https() throws Exception {
        try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50, LOOPBACK)) {
            AtomicInteger requests = new AtomicInteger();
            Future<?> serving = pool.submit(() -> {
                for (int conns = 0; conns < 20; conns++) {
                    SSLSocket s = (SSLSocket) server.accept();
                    ACCEPTED.incrementAndGet();
                    pool.submit(() -> serveHttp(s, requests));
                }
                return null;
            });
            HttpsURLConnection.setDefaultSSLSocketFactory(ctx.getSocketFactory());
            StringBuilder bodies = new StringBuilder();
            int exact = 0;
            for (int i = 0; i < 20; i++) {
                URL url = new URL("https://127.0.0.1:" + server.getLocalPort() + "/r" + i);
                HttpsURLConnection h = (HttpsURLConnection) url.openConnection();
                h.setConnectTimeout(30_000);
                h.setReadTimeout(30_000);
                try (InputStream in = h.getInputStream()) {
                    String body = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                    if (body.equals(expectedBody("/r" + i))) exact++;
                    else bodies.append(" r").append(i).append('=').append(body.length());
                }
            }
            serving.cancel(true);
            return exact + " of 20 bodies exact" + bodies + ", served " + requests.get();
        }
    }

    private static String expectedBody(String path) {
        return (path + " ").repeat(2000);
    }

    private static Void serveHttp(SSLSocket s, AtomicInteger requests) throws IOException {
        try (s) {
            s.setSoTimeout(30_000);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (true) {
                StringBuilder head = new StringBuilder();
                int c;
                while ((c = in.read()) >= 0) {
                    head.append((char) c);
                    if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) break;
                }
                if (c < 0) return null;
                String path = head.toString().split(" ")[1];
                byte[] body = expectedBody(path).getBytes(StandardCharsets.US_ASCII);
                out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\nContent-Type: text/plain\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                requests.incrementAndGet();
            }
        } catch (SocketTimeoutException e) {
            return null;
        }
    }
}
