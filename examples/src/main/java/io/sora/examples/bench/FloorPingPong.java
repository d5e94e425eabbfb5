package io.sora.examples.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The bare floor: two JVMs ping-pong through one memory-mapped file (in {@code /dev/shm}) with no
 * protocol at all. Per message the sender copies it into its mapped region and publishes a sequence
 * number with a release store; the peer spins on an acquire load, copies the message out, and
 * answers the same way. One copy in and one copy out per message, as on sora's shm path, so the
 * ratio shm/floor is the price of sora's protocol and socket emulation.
 *
 * <p>Layout: the client's sequence at offset 0, the server's at 128 (separate cache lines, past the
 * adjacent-line prefetcher), then the client's data region at 4096 and the server's after it.
 * A waiter spins {@link #SPINS} times, then yields the CPU on every further check: on two CPUs the
 * peer answers long before that; with both processes on one CPU a pure spin would wait for the
 * scheduler's time slice instead of measuring anything.
 *
 * <pre>FloorPingPong role=server file=PATH size=BYTES timeout=S
 *FloorPingPong role=client file=PATH size=BYTES timeout=S warmup=N reps=N iterations=N</pre>
 */
public final class FloorPingPong {
    static final int SPINS = 2_000;
    private static final int CLIENT_SEQ = 0;
    private static final int SERVER_SEQ = 128;
    private static final int DATA = 4096;
    /** Sequence value the client publishes to end the server. */
    private static final long STOP = -1;
    private static final VarHandle SEQ = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private FloorPingPong() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FloorPingPong", args);
        a.startWatchdog();
        Path file = Path.of(a.get("file"));
        int size = a.getInt("size");
        if (size < Wire.MIN_SIZE) {
            a.fail("size=" + size + " must be at least " + Wire.MIN_SIZE);
        }
        int region = (size + 4095) & ~4095;
        boolean server = "server".equals(a.get("role"));
        if (!server && !"client".equals(a.get("role"))) {
            a.fail("role=" + a.get("role") + " must be server or client");
        }
        MappedByteBuffer map;
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            if (server) {
                raf.setLength(0); // zeroes any stale sequence numbers
                raf.setLength(DATA + 2L * region);
            }
            map = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, DATA + 2L * region);
        }
        if (server) {
            System.out.println("READY file=" + file);
            System.out.flush();
            serve(map, size, region);
            Files.deleteIfExists(file);
            System.out.println("DONE");
        } else {
            System.out.println(client(a, map, size, region));
        }
    }

    private static void serve(MappedByteBuffer map, int size, int region) {
        byte[] buf = new byte[size];
        int in = DATA;
        int out = DATA + region;
        for (long seq = 1; ; seq++) {
            long got = await(map, CLIENT_SEQ, seq);
            if (got == STOP) {
                return;
            }
            map.get(in, buf, 0, size);
            map.put(out, buf, 0, size);
            SEQ.setRelease(map, SERVER_SEQ, seq);
        }
    }

    private static String client(ChildArgs a, MappedByteBuffer map, int size, int region) {
        int warmup = a.getInt("warmup");
        int reps = a.getInt("reps");
        int iters = a.getInt("iterations");
        if (reps < 1 || iters < 1) {
            a.fail("need reps >= 1 and iterations >= 1; got reps=" + reps + " iterations=" + iters);
        }
        byte[] msg = new byte[size];
        byte[] echo = new byte[size];
        Wire.fill(msg);
        long[] samples = new long[reps * iters];
        long[] repMedians = new long[reps];
        long[] repP99 = new long[reps];
        int out = DATA;
        int in = DATA + region;
        long seq = 0;
        for (int i = 0; i < warmup + reps * iters; i++) {
            seq++;
            Wire.stamp(msg, size, seq);
            long t0 = System.nanoTime();
            map.put(out, msg, 0, size);
            SEQ.setRelease(map, CLIENT_SEQ, seq);
            await(map, SERVER_SEQ, seq);
            map.get(in, echo, 0, size);
            long rtt = System.nanoTime() - t0;
            if (!Arrays.equals(msg, 0, size, echo, 0, size)) {
                a.fail("round trip " + seq + ": the echoed message differs from the one sent");
            }
            int k = i - warmup;
            if (k >= 0) {
                samples[k] = rtt;
                if ((k + 1) % iters == 0) {
                    int r = k / iters;
                    repMedians[r] = Stats.percentile(samples, r * iters, (r + 1) * iters, 50);
                    repP99[r] = Stats.percentile(samples, r * iters, (r + 1) * iters, 99);
                }
            }
        }
        SEQ.setRelease(map, CLIENT_SEQ, STOP);
        long[] sorted = repMedians.clone();
        long median = Stats.percentile(sorted, 50);
        long pooledP99 = Stats.percentile(samples, 99);
        StringBuilder b = new StringBuilder("RESULT path=floor");
        b.append(" rtt_median_ns=").append(median)
                .append(" rtt_p99_ns=").append(Stats.percentile(repP99, 50))
                .append(" rtt_rep_min_ns=").append(sorted[0])
                .append(" rtt_rep_max_ns=").append(sorted[reps - 1])
                .append(" rtt_pooled_p99_ns=").append(pooledP99)
                .append(" rtt_max_ns=").append(samples[samples.length - 1])
                .append(" rtt_samples=").append(samples.length);
        return b.toString();
    }

    /** Waits until the long at {@code offset} is {@code want} or {@link #STOP}; returns what it saw. */
    private static long await(MappedByteBuffer map, int offset, long want) {
        int spins = 0;
        while (true) {
            long v = (long) SEQ.getAcquire(map, offset);
            if (v == want || v == STOP) {
                return v;
            }
            if (spins < SPINS) {
                spins++;
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }
}
