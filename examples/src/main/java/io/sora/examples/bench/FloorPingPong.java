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
 * <p>Layout: the client's sequence at offset 0, the current message size at 64, the server's
 * sequence at 128 (separate cache lines, past the adjacent-line prefetcher), then the client's data
 * region at 4096 and the server's after it, each as large as the largest size of the sweep.
 * A waiter spins {@link #SPINS} times, then yields the CPU on every further check: on two CPUs the
 * peer answers long before that; with both processes on one CPU a pure spin would wait for the
 * scheduler's time slice instead of measuring anything.
 *
 * <pre>FloorPingPong role=server file=PATH pp-sizes=LIST timeout=S
 *FloorPingPong role=client file=PATH pp-sizes=LIST pp-iterations=N pp-bytes=N warmup=N reps=N timeout=S</pre>
 */
public final class FloorPingPong {
    static final int SPINS = 2_000;
    private static final int CLIENT_SEQ = 0;
    private static final int SIZE = 64;
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
        Meter.prime();
        Path file = Path.of(a.get("file"));
        int[] sizes = a.getSizes("pp-sizes");
        if (sizes.length == 0) {
            a.fail("pp-sizes is empty");
        }
        int maxSize = Arrays.stream(sizes).max().getAsInt();
        int region = (maxSize + 4095) & ~4095;
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
            serve(map, maxSize, region);
            Files.deleteIfExists(file);
            System.out.println("DONE");
        } else {
            System.out.println(client(a, map, sizes, maxSize, region));
        }
    }

    private static void serve(MappedByteBuffer map, int maxSize, int region) {
        byte[] buf = new byte[maxSize];
        int in = DATA;
        int out = DATA + region;
        for (long seq = 1; ; seq++) {
            long got = await(map, CLIENT_SEQ, seq);
            if (got == STOP) {
                return;
            }
            int size = map.getInt(SIZE); // ordered by the acquire load above
            map.get(in, buf, 0, size);
            map.put(out, buf, 0, size);
            SEQ.setRelease(map, SERVER_SEQ, seq);
        }
    }

    private static String client(ChildArgs a, MappedByteBuffer map, int[] sizes, int maxSize, int region) {
        int maxIters = a.getInt("pp-iterations");
        int reps = a.getInt("reps");
        long budget = a.getLong("pp-bytes");
        byte[] msg = new byte[maxSize];
        byte[] echo = new byte[maxSize];
        Wire.fill(msg);
        RttRecorder rec = new RttRecorder(reps, maxIters);
        StringBuilder b = new StringBuilder("RESULT path=floor");
        long[] seq = {0};
        for (int s = 0; s < sizes.length; s++) {
            int size = sizes[s];
            int iters = Sweep.iterations(size, maxIters, budget);
            int warm = Sweep.warmup(s == 0, a.getInt("warmup"), iters);
            rec.start(size, iters);
            map.putInt(SIZE, size); // published to the server by the next release store
            for (int i = 0; i < warm; i++) {
                roundTrip(a, map, region, msg, echo, size, seq, null, 0);
            }
            for (int r = 0; r < reps; r++) {
                long[] cpu0 = Meter.cpu();
                long alloc0 = Meter.allocatedBytes();
                for (int i = 0; i < iters; i++) {
                    roundTrip(a, map, region, msg, echo, size, seq, rec.samples(), rec.index(r, i));
                }
                long alloc1 = Meter.allocatedBytes();
                long cpu = Meter.cpuSince(cpu0);
                rec.addCosts(cpu, Meter.delta(alloc0, alloc1), -1, -1);
                rec.endRep(r);
            }
            rec.appendTo(b);
        }
        SEQ.setRelease(map, CLIENT_SEQ, STOP);
        return b.toString();
    }

    private static void roundTrip(ChildArgs a, MappedByteBuffer map, int region, byte[] msg, byte[] echo, int size,
            long[] seqHolder, long[] samples, int slot) {
        long seq = ++seqHolder[0];
        Wire.stamp(msg, size, seq);
        long t0 = System.nanoTime();
        map.put(DATA, msg, 0, size);
        SEQ.setRelease(map, CLIENT_SEQ, seq);
        await(map, SERVER_SEQ, seq);
        map.get(DATA + region, echo, 0, size);
        long t1 = System.nanoTime();
        if (samples != null) {
            samples[slot] = t1 - t0;
        }
        if (!Arrays.equals(msg, 0, size, echo, 0, size)) {
            a.fail("round trip " + seq + " (" + size + " B): the echoed message differs from the one sent");
        }
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
