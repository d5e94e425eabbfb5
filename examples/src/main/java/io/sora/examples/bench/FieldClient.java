package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * The field benchmark's client child. Opens {@code conns} connections, then on one thread per
 * connection times {@code rts / conns} round trips of a {@code size}-byte message from the very
 * first one after connect: no warm-up, as an application does. Between two round trips a
 * connection's thread may compute for {@code think-ns} nanoseconds (a xorshift loop checked against
 * {@link System#nanoTime()}, whose result is printed so the JIT cannot drop it), outside the timed
 * interval. Each round trip's time goes into a {@code long[]} allocated before connecting; each echo
 * is compared with the message sent (which carries its sequence number) after the clock stops. After
 * the traffic each socket's path is checked ({@link ChildArgs#checkPath}). Prints one line
 * {@code RESULT key=value ...}: {@code rts median_ns p99_ns max_ns first_ns mean_ns} over all round
 * trips pooled, {@code wall_ns} from the start of the first round trip to the end of the last,
 * {@code rtps} (round trips a second, all connections), {@code think_mean_ns}, {@code sink}.
 * No {@code TCP_NODELAY}: sockets as an application gets them. With {@code idle=N} it first opens N
 * more connections that carry nothing, holds them open through the run (a server most of whose
 * clients are quiet), checks their path after it and closes them last.
 *
 * <pre>FieldClient address=IP port=N size=N rts=N conns=N think-ns=N [idle=N] path=tcp|shm agent=yes|no timeout=S</pre>
 */
public final class FieldClient {
    private FieldClient() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        ChildArgs a = ChildArgs.parse("FieldClient", args);
        a.startWatchdog();
        int size = a.getInt("size");
        int conns = a.getInt("conns");
        int perConn = a.getInt("rts") / Math.max(1, conns);
        long thinkNs = a.getLong("think-ns");
        if (size < Wire.MIN_SIZE || conns < 1 || perConn < 1 || thinkNs < 0) {
            a.fail("need size >= " + Wire.MIN_SIZE + ", conns >= 1, rts >= conns, think-ns >= 0; got " + Arrays.toString(args));
        }
        int idle = a.has("idle") ? a.getInt("idle") : 0;
        Socket[] quiet = new Socket[Math.max(0, idle)];
        for (int i = 0; i < quiet.length; i++) {
            quiet[i] = new Socket(a.get("address"), a.getInt("port"));
        }
        long[][] samples = new long[conns][perConn];
        long[] sinks = new long[conns];
        long[] thinkNanos = new long[conns];
        Socket[] sockets = new Socket[conns];
        for (int c = 0; c < conns; c++) {
            sockets[c] = new Socket(a.get("address"), a.getInt("port"));
        }
        CountDownLatch start = new CountDownLatch(1);
        Thread[] threads = new Thread[conns];
        for (int c = 0; c < conns; c++) {
            int id = c;
            threads[c] = new Thread(() -> {
                try {
                    start.await();
                    run(a, sockets[id], size, thinkNs, samples[id], sinks, thinkNanos, id);
                } catch (IOException e) {
                    a.fail("connection " + id + ": " + e);
                } catch (InterruptedException e) {
                    a.fail("connection " + id + " interrupted");
                }
            }, "field-client-" + c);
            threads[c].start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long wall = System.nanoTime() - t0;
        for (Socket q : quiet) {
            a.checkPath(q);
            q.close();
        }
        if (Boolean.getBoolean("sora.bench.timeline")) System.out.println(timeline(samples[0]));
        long first = samples[0][0];
        long[] all = new long[conns * perConn];
        long sum = 0;
        long sink = 0;
        long think = 0;
        for (int c = 0; c < conns; c++) {
            System.arraycopy(samples[c], 0, all, c * perConn, perConn);
            sink ^= sinks[c];
            think += thinkNanos[c];
        }
        for (long s : all) {
            sum += s;
        }
        int n = all.length;
        long median = Stats.percentile(all, 50);
        long p99 = Stats.percentile(all, 99);
        int thinks = conns * (perConn - 1);
        System.out.println("RESULT path=" + a.get("path") + " rts=" + n + " conns=" + conns + " median_ns=" + median
                + " p99_ns=" + p99 + " max_ns=" + all[n - 1] + " first_ns=" + first + " mean_ns=" + sum / n
                + " wall_ns=" + wall + " rtps=" + String.format(Locale.ROOT, "%.1f", n * 1e9 / wall)
                + " think_mean_ns=" + (thinks == 0 ? 0 : think / thinks) + " sink=" + sink);
    }

    private static void run(ChildArgs a, Socket socket, int size, long thinkNs, long[] samples, long[] sinks,
            long[] thinkNanos, int id) throws IOException {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] msg = new byte[size];
            byte[] echo = new byte[size];
            Wire.fill(msg);
            long x = 0x9E3779B97F4A7C15L + id;
            long thought = 0;
            for (int i = 0; i < samples.length; i++) {
                if (thinkNs > 0 && i > 0) {
                    long s = System.nanoTime();
                    x = think(thinkNs, x);
                    thought += System.nanoTime() - s;
                }
                Wire.stamp(msg, size, i);
                long t0 = System.nanoTime();
                out.write(msg, 0, size);
                out.flush();
                Wire.readFully(in, echo, size);
                long t1 = System.nanoTime();
                samples[i] = t1 - t0;
                if (!Arrays.equals(msg, 0, size, echo, 0, size)) {
                    a.fail("connection " + id + ", round trip " + i + " (" + size + " B): the echo differs from the message sent");
                }
            }
            a.checkPath(socket);
            sinks[id] = x;
            thinkNanos[id] = thought;
        }
    }

    /**
     * {@code -Dsora.bench.timeline=true}: the first connection's round trips in blocks of 1,000 (or
     * {@code -Dsora.bench.timelineBlock}), in order, each as its median and the time since the first
     * round trip began at its end: when a run gets fast, and what it cost before.
     */
    static String timeline(long[] nanos) {
        int block = Math.max(1, Integer.getInteger("sora.bench.timelineBlock", 1000));
        StringBuilder tl = new StringBuilder("TIMELINE median ns @ ms since the start, per " + block + " round trips:");
        long elapsed = 0;
        for (int b = 0; b + block <= nanos.length; b += block) {
            long[] part = Arrays.copyOfRange(nanos, b, b + block);
            for (long v : part) elapsed += v;
            Arrays.sort(part);
            tl.append(' ').append(part[block / 2]).append('@').append(elapsed / 1_000_000);
        }
        return tl.toString();
    }

    /** Busy computation for at least {@code nanos}: a xorshift generator the caller keeps the result of. */
    static long think(long nanos, long x) {
        long start = System.nanoTime();
        do {
            for (int i = 0; i < 16; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        } while (System.nanoTime() - start < nanos);
        return x;
    }
}
