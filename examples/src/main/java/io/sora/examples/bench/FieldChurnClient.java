package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;

/**
 * The client child of the field benchmark's {@code setup} row: {@code n} connections one after
 * another, each timed from {@code new Socket(address, port)} to the first answer byte (a one-byte
 * request and its one-byte answer: what an application waits before its first reply), then closed.
 * The path of every connection is checked ({@link ChildArgs#checkPath}) outside the timed interval.
 * Prints {@code RESULT path=P rts=N median_ns=... p99_ns=... max_ns=... first_ns=... mean_ns=...}.
 *
 * <pre>FieldChurnClient address=IP port=N n=N path=tcp|shm agent=yes|no timeout=S</pre>
 */
public final class FieldChurnClient {
    private FieldChurnClient() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FieldChurnClient", args);
        a.startWatchdog();
        int n = a.getInt("n");
        if (n < 1) a.fail("need n >= 1");
        long[] samples = new long[n];
        String address = a.get("address");
        int port = a.getInt("port");
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            Socket s = new Socket(address, port);
            try (s) {
                s.getOutputStream().write(i & 0x7f);
                InputStream in = s.getInputStream();
                int b = in.read();
                samples[i] = System.nanoTime() - t0;
                if (b != ((i & 0x7f) ^ 0x55)) {
                    a.fail("connection " + i + ": answer " + b + ", expected " + ((i & 0x7f) ^ 0x55));
                }
                a.checkPath(s);
            }
        }
        long first = samples[0];
        long sum = 0;
        for (long v : samples) sum += v;
        long median = Stats.percentile(samples, 50);
        long p99 = Stats.percentile(samples, 99);
        System.out.println("RESULT path=" + a.get("path") + " rts=" + n + " median_ns=" + median + " p99_ns=" + p99
                + " max_ns=" + samples[n - 1] + " first_ns=" + first + " mean_ns=" + sum / n
                + " rtps=" + String.format(java.util.Locale.ROOT, "%.1f", n * 1e9 / sum));
    }
}
