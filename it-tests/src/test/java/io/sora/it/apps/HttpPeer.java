package io.sora.it.apps;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's own HTTP server ({@code com.sun.net.httpserver}: a selector thread, non-blocking accept)
 * and HTTP client ({@code java.net.http}: non-blocking connect, a selector thread), code no one here
 * wrote. {@code server}: serves {@code /echo} (the request body back) and {@code /stop}, prints
 * {@code PORT n}, exits after {@code /stop}. {@code client PORT}: POSTs bodies of several sizes (seeded
 * random bytes) over HTTP/1.1, checks every echoed byte, prints {@code OK}.
 */
public final class HttpPeer {
    public static final int[] SIZES = {0, 1, 4096, 100_000, 4 << 20, 17};

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server();
        } else {
            client(Integer.parseInt(args[1]));
        }
    }

    private static void server() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        CountDownLatch stop = new CountDownLatch(1);
        server.createContext("/echo", ex -> {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/stop", ex -> {
            ex.sendResponseHeaders(200, -1);
            ex.close();
            stop.countDown();
        });
        server.start();
        System.out.println("PORT " + server.getAddress().getPort());
        System.out.flush();
        if (!stop.await(120, TimeUnit.SECONDS)) throw new IllegalStateException("no /stop within 120 s");
        server.stop(0);
        System.out.println("OK");
    }

    private static void client(int port) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(30)).build();
        String base = "http://127.0.0.1:" + port;
        Random random = new Random(42);
        for (int size : SIZES) {
            byte[] body = new byte[size];
            random.nextBytes(body);
            HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/echo")).timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
            HttpResponse<byte[]> resp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
            if (resp.statusCode() != 200) throw new IllegalStateException("status " + resp.statusCode() + " for " + size + " bytes");
            if (!Arrays.equals(body, resp.body())) {
                throw new IllegalStateException("echo of " + size + " bytes differs (" + resp.body().length + " bytes back)");
            }
            System.out.println("ECHO " + size);
        }
        HttpResponse<Void> stop = client.send(HttpRequest.newBuilder(URI.create(base + "/stop")).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.discarding());
        if (stop.statusCode() != 200) throw new IllegalStateException("stop: status " + stop.statusCode());
        System.out.println("OK");
    }
}
