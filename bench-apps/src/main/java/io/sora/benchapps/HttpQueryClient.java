package io.sora.benchapps;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Random;

/**
 * The client JVM of an {@code http} run: the JDK's own {@link HttpClient} (HTTP/1.1, its selector
 * thread, one keep-alive connection since requests go one at a time), as an application calling a
 * REST service would use it. {@code warmup} untimed, then {@code queries} timed {@code GET /row?id=N}
 * of seeded random ids, each checked against {@link QueryClient#valueOf}. Prints the same
 * {@code RESULT} line as {@link QueryClient}, a "query" being one request and its response.
 *
 * <p>Arguments: {@code http://127.0.0.1:PORT ROWS WARMUP QUERIES SEED DRIVER_PID DEADLINE_MS}.
 */
public final class HttpQueryClient {
    private HttpQueryClient() {
    }

    public static void main(String[] args) throws Exception {
        String base = args[0];
        int rows = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        int queries = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        Watchdog.start("client", Long.parseLong(args[5]), Long.parseLong(args[6]));
        Random random = new Random(seed);
        int[] warmIds = random.ints(warmup, 0, rows).toArray();
        int[] ids = random.ints(queries, 0, rows).toArray();
        long[] nanos = new long[queries];

        long c0 = System.nanoTime();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(30)).build();
        // the first request opens the connection: timed as "connect", checked as any other
        get(client, base, 0);
        long connectNanos = System.nanoTime() - c0;
        for (int id : warmIds) {
            get(client, base, id);
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < queries; i++) {
            long a = System.nanoTime();
            get(client, base, ids[i]);
            nanos[i] = System.nanoTime() - a;
        }
        long totalNanos = System.nanoTime() - t0;
        QueryClient.printResult(nanos, totalNanos, connectNanos, 0);
        System.exit(0);
    }

    /** One request; fails unless the status is 200 and the body is the row's value. */
    private static void get(HttpClient client, String base, int id) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/row?id=" + id)).GET().build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        String expected = QueryClient.valueOf(id);
        if (response.statusCode() != 200 || !expected.equals(response.body())) {
            throw new IllegalStateException("GET id=" + id + ": expected 200 " + expected + ", got "
                    + response.statusCode() + " " + response.body());
        }
    }
}
