package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * The client child: connects to {@code 127.0.0.1:port}, checks the path, runs the ping-pong then
 * (when {@code stream-bytes > 0}) the one-way stream, and prints one line
 * {@code RESULT key=value ...} that the driver parses. Every echoed message is compared with the one
 * sent, outside the timed interval.
 *
 * <pre>BenchClient port=N path=tcp|shm agent=yes|no timeout=S size=BYTES warmup=N reps=N iterations=N
 *             stream-bytes=BYTES stream-chunk=BYTES stream-reps=N</pre>
 */
public final class BenchClient {
    private BenchClient() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("BenchClient", args);
        a.startWatchdog();
        StringBuilder result = new StringBuilder("RESULT");
        try (Socket socket = new Socket("127.0.0.1", a.getInt("port"))) {
            socket.setTcpNoDelay(true);
            a.checkPath(socket);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] header = new byte[Wire.HEADER];
            result.append(" path=").append(a.get("path"));
            pingPong(a, in, out, header, result);
            if (a.getLong("stream-bytes") > 0) {
                stream(a, in, out, header, result);
            }
            Wire.sendHeader(out, header, Wire.END, 0, 0);
        }
        System.out.println(result);
    }

    private static void pingPong(ChildArgs a, InputStream in, OutputStream out, byte[] header, StringBuilder result)
            throws IOException {
        int size = a.getInt("size");
        int warmup = a.getInt("warmup");
        int reps = a.getInt("reps");
        int iters = a.getInt("iterations");
        if (size < Wire.MIN_SIZE || reps < 1 || iters < 1) {
            a.fail("need size >= " + Wire.MIN_SIZE + ", reps >= 1, iterations >= 1; got size=" + size
                    + " reps=" + reps + " iterations=" + iters);
        }
        byte[] msg = new byte[size];
        byte[] echo = new byte[size];
        Wire.fill(msg);
        long[] samples = new long[reps * iters];
        long[] repMedians = new long[reps];
        long[] repP99 = new long[reps];
        Wire.sendHeader(out, header, Wire.PING, size, warmup + (long) reps * iters);
        long seq = 0;
        for (int i = 0; i < warmup; i++) {
            seq = roundTrip(a, in, out, msg, echo, seq);
        }
        for (int r = 0; r < reps; r++) {
            int base = r * iters;
            for (int i = 0; i < iters; i++) {
                Wire.stamp(msg, size, seq);
                long t0 = System.nanoTime();
                out.write(msg, 0, size);
                out.flush();
                Wire.readFully(in, echo, size);
                samples[base + i] = System.nanoTime() - t0;
                if (!Arrays.equals(msg, 0, size, echo, 0, size)) {
                    a.fail("round trip " + seq + ": the echoed message differs from the one sent");
                }
                seq++;
            }
            repMedians[r] = Stats.percentile(samples, base, base + iters, 50);
            repP99[r] = Stats.percentile(samples, base, base + iters, 99);
        }
        long pooledP99 = Stats.percentile(samples, 99);
        long pooledMax = samples[samples.length - 1];
        long[] sortedMedians = repMedians.clone();
        result.append(" rtt_median_ns=").append(Stats.percentile(sortedMedians, 50))
                .append(" rtt_p99_ns=").append(Stats.percentile(repP99, 50))
                .append(" rtt_rep_min_ns=").append(sortedMedians[0])
                .append(" rtt_rep_max_ns=").append(sortedMedians[reps - 1])
                .append(" rtt_pooled_p99_ns=").append(pooledP99)
                .append(" rtt_max_ns=").append(pooledMax)
                .append(" rtt_samples=").append(samples.length)
                .append(" rtt_rep_medians_ns=").append(join(repMedians));
    }

    /** An untimed round trip (warm-up). */
    private static long roundTrip(ChildArgs a, InputStream in, OutputStream out, byte[] msg, byte[] echo, long seq)
            throws IOException {
        Wire.stamp(msg, msg.length, seq);
        out.write(msg, 0, msg.length);
        out.flush();
        Wire.readFully(in, echo, echo.length);
        if (!Arrays.equals(msg, echo)) {
            a.fail("warm-up round trip " + seq + ": the echoed message differs from the one sent");
        }
        return seq + 1;
    }

    private static void stream(ChildArgs a, InputStream in, OutputStream out, byte[] header, StringBuilder result)
            throws IOException {
        int chunk = a.getInt("stream-chunk");
        long bytes = a.getLong("stream-bytes");
        int reps = a.getInt("stream-reps");
        long chunks = bytes / chunk;
        if (chunk < Wire.MIN_SIZE || chunks < 1 || reps < 1) {
            a.fail("need stream-chunk >= " + Wire.MIN_SIZE + ", stream-bytes >= stream-chunk, stream-reps >= 1; got "
                    + chunk + ", " + bytes + ", " + reps);
        }
        byte[] buf = new byte[chunk];
        Wire.fill(buf);
        CRC32 crc = new CRC32();
        // one untimed pass of up to 1/8 of the volume warms the JIT and the path's buffers
        streamOnce(a, in, out, header, buf, crc, Math.max(1, chunks / 8));
        double[] bps = new double[reps];
        long totalNanos = 0;
        for (int r = 0; r < reps; r++) {
            long nanos = streamOnce(a, in, out, header, buf, crc, chunks);
            totalNanos += nanos;
            bps[r] = chunks * (double) chunk * 1e9 / nanos;
        }
        String perRep = join(bps);
        result.append(" stream_chunk=").append(chunk)
                .append(" stream_bytes=").append(chunks * chunk)
                .append(" stream_reps=").append(reps)
                .append(" stream_seconds=").append(String.format(java.util.Locale.ROOT, "%.3f", totalNanos / 1e9))
                .append(" stream_bps_rep=").append(perRep);
        double[] sorted = bps.clone();
        result.append(" stream_bps=").append(String.format(java.util.Locale.ROOT, "%.0f", Stats.median(sorted)))
                .append(" stream_bps_min=").append(String.format(java.util.Locale.ROOT, "%.0f", sorted[0]))
                .append(" stream_bps_max=").append(String.format(java.util.Locale.ROOT, "%.0f", sorted[reps - 1]));
    }

    /** Sends {@code chunks} stamped chunks and waits for the server's verdict; returns the elapsed nanoseconds. */
    private static long streamOnce(ChildArgs a, InputStream in, OutputStream out, byte[] header, byte[] buf, CRC32 crc,
            long chunks) throws IOException {
        int size = buf.length;
        Wire.sendHeader(out, header, Wire.STREAM, size, chunks);
        long t0 = System.nanoTime();
        for (long i = 0; i < chunks; i++) {
            Wire.stamp(buf, size, i);
            out.write(buf, 0, size);
        }
        out.flush();
        Wire.readFully(in, header, Wire.HEADER);
        long nanos = System.nanoTime() - t0;
        crc.reset();
        crc.update(buf, 0, size);
        long gotChunks = (long) Wire.LONG.get(header, 0);
        long gotCrc = (long) Wire.LONG.get(header, 8);
        if (gotChunks != chunks || gotCrc != crc.getValue()) {
            a.fail("stream verdict: server saw " + gotChunks + " chunks with final CRC " + Long.toHexString(gotCrc)
                    + ", sent " + chunks + " with CRC " + Long.toHexString(crc.getValue()));
        }
        return nanos;
    }

    private static String join(long[] values) {
        StringBuilder b = new StringBuilder();
        for (long v : values) {
            b.append(b.length() == 0 ? "" : ",").append(v);
        }
        return b.toString();
    }

    private static String join(double[] values) {
        StringBuilder b = new StringBuilder();
        for (double v : values) {
            b.append(b.length() == 0 ? "" : ",").append(String.format(java.util.Locale.ROOT, "%.0f", v));
        }
        return b.toString();
    }
}
