package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;

/**
 * The client child: connects to {@code address:port}, checks the path, runs the ping-pong sweep, the
 * streaming sweep and the file copy (each only when given sizes or a file), and prints one line
 * {@code RESULT key=value ...} that the driver parses. Every echoed message is compared with the one
 * sent, outside the timed interval.
 *
 * <pre>BenchClient address=IP port=N path=tcp|shm|rdma agent=yes|no timeout=S
 *             pp-sizes=LIST pp-iterations=N pp-bytes=N warmup=N reps=N
 *             st-sizes=LIST st-reps=N st-target-ms=N st-max-bytes=N
 *             copy-file=PATH copy-bytes=N copy-crc=HEX copy-reps=N copy-chunk=N</pre>
 */
public final class BenchClient {
    private BenchClient() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("BenchClient", args);
        a.startWatchdog();
        Meter.prime();
        StringBuilder result = new StringBuilder("RESULT path=").append(a.get("path"));
        try (Socket socket = new Socket(a.get("address"), a.getInt("port"))) {
            socket.setTcpNoDelay(true);
            a.checkPath(socket);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] header = new byte[Wire.HEADER];
            pingPongSweep(a, in, out, header, result);
            ClientStreams streams = new ClientStreams(a, in, out, header, result);
            streams.streamSweep();
            streams.copy();
            Wire.command(in, out, header, Wire.END, 0, 0, 0);
        }
        System.out.println(result);
    }

    private static void pingPongSweep(ChildArgs a, InputStream in, OutputStream out, byte[] header, StringBuilder result)
            throws IOException {
        int[] sizes = a.getSizes("pp-sizes");
        if (sizes.length == 0) {
            return;
        }
        int maxIters = a.getInt("pp-iterations");
        long budget = a.getLong("pp-bytes");
        int reps = a.getInt("reps");
        int maxSize = Arrays.stream(sizes).max().getAsInt();
        byte[] msg = new byte[maxSize];
        byte[] echo = new byte[maxSize];
        Wire.fill(msg);
        RttRecorder rec = new RttRecorder(reps, maxIters);
        Wire.Receipt receipt = new Wire.Receipt();
        long seq = 0;
        for (int s = 0; s < sizes.length; s++) {
            int size = sizes[s];
            int iters = Sweep.iterations(size, maxIters, budget);
            int warm = Sweep.warmup(s == 0, a.getInt("warmup"), iters);
            rec.start(size, iters);
            if (warm > 0) {
                Wire.command(in, out, header, Wire.PING, size, warm, 0);
                for (int i = 0; i < warm; i++) {
                    roundTrip(a, in, out, msg, echo, size, seq++, null, 0);
                }
                Wire.readReceipt(in, header, receipt);
            }
            for (int r = 0; r < reps; r++) {
                Wire.command(in, out, header, Wire.PING, size, iters, 0);
                long[] cpu0 = Meter.cpu();
                long alloc0 = Meter.allocatedBytes();
                for (int i = 0; i < iters; i++) {
                    roundTrip(a, in, out, msg, echo, size, seq++, rec.samples(), rec.index(r, i));
                }
                long alloc1 = Meter.allocatedBytes();
                long cpu = Meter.cpuSince(cpu0);
                Wire.readReceipt(in, header, receipt);
                rec.addCosts(cpu, Meter.delta(alloc0, alloc1), receipt.cpuNanos, receipt.allocatedBytes);
                rec.endRep(r);
            }
            rec.appendTo(result);
        }
    }

    /** One round trip; its time goes to {@code samples[slot]} unless {@code samples} is null (warm-up). */
    private static void roundTrip(ChildArgs a, InputStream in, OutputStream out, byte[] msg, byte[] echo, int size,
            long seq, long[] samples, int slot) throws IOException {
        Wire.stamp(msg, size, seq);
        long t0 = System.nanoTime();
        out.write(msg, 0, size);
        out.flush();
        Wire.readFully(in, echo, size);
        long t1 = System.nanoTime();
        if (samples != null) {
            samples[slot] = t1 - t0;
        }
        if (!Arrays.equals(msg, 0, size, echo, 0, size)) {
            a.fail("round trip " + seq + " (" + size + " B): the echoed message differs from the one sent");
        }
    }
}
