package io.sora.examples.bench;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * The client child's one-way phases: the streaming sweep over write sizes and the file copy. Each
 * timed repetition ends with the server's receipt, so the clock covers delivery, not just
 * {@code write} returning. Results are appended to the child's {@code RESULT} line as
 * {@code st.SIZE.key=value} and {@code copy.key=value}. Used by the child's main thread only.
 */
final class ClientStreams {
    private final ChildArgs a;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] header;
    private final StringBuilder result;
    private final Wire.Receipt receipt = new Wire.Receipt();
    private final CRC32C crc = new CRC32C();

    ClientStreams(ChildArgs a, InputStream in, OutputStream out, byte[] header, StringBuilder result) {
        this.a = a;
        this.in = in;
        this.out = out;
        this.header = header;
        this.result = result;
    }

    /** Streams at every write size of {@code st-sizes}: one calibrating warm-up pass, then timed repetitions. */
    void streamSweep() throws IOException {
        int[] sizes = a.getSizes("st-sizes");
        if (sizes.length == 0) {
            return;
        }
        int reps = a.getInt("st-reps");
        long targetNanos = a.getLong("st-target-ms") * 1_000_000L;
        long maxBytes = a.getLong("st-max-bytes");
        byte[] buf = new byte[Arrays.stream(sizes).max().getAsInt()];
        Wire.fill(buf);
        double[] bps = new double[reps];
        long[] costs = new long[4];
        for (int size : sizes) {
            long warm = Sweep.streamWarmWrites(size, maxBytes);
            long warmNanos = streamOnce(buf, size, warm);
            long writes = Sweep.streamWrites(size, warm * (double) size * 1e9 / warmNanos, targetNanos, maxBytes);
            Arrays.fill(costs, 0);
            for (int r = 0; r < reps; r++) {
                long[] cpu0 = Meter.cpu();
                long alloc0 = Meter.allocatedBytes();
                long nanos = streamOnce(buf, size, writes);
                long alloc1 = Meter.allocatedBytes();
                long cpu = Meter.cpuSince(cpu0);
                bps[r] = writes * (double) size * 1e9 / nanos;
                add(costs, cpu, Meter.delta(alloc0, alloc1), receipt.cpuNanos, receipt.allocatedBytes);
            }
            appendThroughput("st." + size + ".", bps, writes * reps, writes * reps * size, costs);
        }
    }

    /** Sends {@code writes} stamped chunks and waits for the server's receipt; returns the elapsed nanoseconds. */
    private long streamOnce(byte[] buf, int size, long writes) throws IOException {
        Wire.command(in, out, header, Wire.STREAM, size, writes, 0);
        long t0 = System.nanoTime();
        for (long i = 0; i < writes; i++) {
            Wire.stamp(buf, size, i);
            out.write(buf, 0, size);
        }
        out.flush();
        Wire.readReceipt(in, header, receipt);
        long nanos = System.nanoTime() - t0;
        crc.reset();
        crc.update(buf, 0, size);
        if (receipt.count != writes || receipt.check != crc.getValue()) {
            a.fail("stream verdict (" + size + " B writes): server saw " + receipt.count + " writes with final CRC "
                    + Long.toHexString(receipt.check) + ", sent " + writes + " with CRC " + Long.toHexString(crc.getValue()));
        }
        return nanos;
    }

    /**
     * Sends the file {@code copy-file} {@code copy-reps} times in {@code copy-chunk} reads and writes;
     * the server writes it to its own file and checks the CRC-32C the driver computed. The clock runs
     * from opening the file to the server's receipt.
     */
    void copy() throws IOException {
        String file = a.get("copy-file");
        if (file.isEmpty()) {
            return;
        }
        long bytes = a.getLong("copy-bytes");
        long expected = Long.parseUnsignedLong(a.get("copy-crc"), 16);
        int chunk = a.getInt("copy-chunk");
        int reps = a.getInt("copy-reps");
        byte[] buf = new byte[chunk];
        double[] bps = new double[reps];
        long[] costs = new long[4];
        for (int r = 0; r < reps; r++) {
            Wire.command(in, out, header, Wire.COPY, chunk, bytes, expected);
            long[] cpu0 = Meter.cpu();
            long alloc0 = Meter.allocatedBytes();
            long t0 = System.nanoTime();
            long sent = 0;
            try (FileInputStream src = new FileInputStream(file)) {
                for (int n; sent < bytes && (n = src.read(buf, 0, (int) Math.min(chunk, bytes - sent))) > 0; sent += n) {
                    out.write(buf, 0, n);
                }
            }
            out.flush();
            if (sent != bytes) {
                a.fail("copy: " + file + " gave " + sent + " bytes, expected " + bytes);
            }
            Wire.readReceipt(in, header, receipt);
            long nanos = System.nanoTime() - t0;
            long alloc1 = Meter.allocatedBytes();
            long cpu = Meter.cpuSince(cpu0);
            if (receipt.check != expected) {
                a.fail("copy: the server computed CRC-32C " + Long.toHexString(receipt.check) + ", expected "
                        + Long.toHexString(expected));
            }
            bps[r] = bytes * 1e9 / nanos;
            add(costs, cpu, Meter.delta(alloc0, alloc1), receipt.cpuNanos, receipt.allocatedBytes);
        }
        long chunks = (bytes + chunk - 1) / chunk;
        appendThroughput("copy.", bps, chunks * reps, bytes * reps, costs);
        result.append(" copy.crc=").append(Long.toHexString(expected)).append(" copy.verified=yes");
    }

    private void appendThroughput(String key, double[] bps, long msgs, long bytes, long[] costs) {
        double[] sorted = bps.clone();
        double median = Stats.median(sorted);
        String p = " " + key;
        result.append(p).append("bps=").append(String.format(Locale.ROOT, "%.0f", median))
                .append(p).append("bps_min=").append(String.format(Locale.ROOT, "%.0f", sorted[0]))
                .append(p).append("bps_max=").append(String.format(Locale.ROOT, "%.0f", sorted[sorted.length - 1]))
                .append(p).append("msgs=").append(msgs)
                .append(p).append("bytes=").append(bytes);
        RttRecorder.appendCosts(result, p, costs);
    }

    private static void add(long[] costs, long... v) {
        for (int i = 0; i < costs.length; i++) {
            costs[i] = costs[i] < 0 || v[i] < 0 ? -1 : costs[i] + v[i];
        }
    }
}
