package io.sora.transport.shm;

import io.sora.transport.RingConnection;
import io.sora.transport.RingInputStream;
import io.sora.transport.RingOutputStream;
import io.sora.transport.SocketHooks;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs the shm data path in this process, with no peer and no pairing, so that the application's
 * first messages do not pay for it cold. Both ends of one connection sit on one segment in this
 * thread: messages of a few sizes go out and back {@code rounds} times, and the sleep announcements
 * and wake-ups are exercised once, without sleeping; then an eighth as many round trips with the
 * echo on a second thread, so that reads and writes really wait (see {@link #pingPong}). That links every var-handle access mode the
 * path uses (each costs about a millisecond the first time, in the application's thread otherwise)
 * and gets the stream and medium methods compiled: measured here, the JSOR sample's first ten round
 * trips from a cold JVM took ~2.6 ms each without it.
 *
 * <p>The segment is an ordinary segment file of this process in the transport's private directory,
 * unlinked as soon as it is mapped (if the JVM dies in between, the next start's sweep of dead
 * processes' segments removes it).
 */
final class DataPathWarmup {
    private DataPathWarmup() {
    }

    /** The ends of the warm-up connection while a warm-up runs ({@link #abort} closes them); else null. */
    private static volatile RingConnection[] running;
    /** Set by {@link #abort}: a warm-up running then, or begun later in this class loader, stops. */
    private static volatile boolean aborted;

    /**
     * Stops the warm-up (the JVM exits, or the agent detaches): its connection's ends are closed, so that
     * every read and write of it, on any of its threads, ends at once with an error, a sleeping one woken.
     * A thread of it left asleep in the futex would hold the JVM's exit: HotSpot waits up to 300 ms for a
     * thread in native code (a program exiting while its warm-up ran took that much longer, 2026-11-28).
     */
    static void abort() {
        aborted = true;
        abortRunning();
    }

    /** Tests: a warm-up may run again after {@link #abort} (in the agent, an abort is for good). */
    static void allowAgain() {
        aborted = false;
    }

    private static void abortRunning() {
        RingConnection[] ends = running;
        if (ends != null) {
            for (RingConnection c : ends) c.close();
        }
    }

    /**
     * Pumps {@code rounds} round trips through an in-process shm connection; false if that failed.
     *
     * @param hooks the hooks the application's connections get (their class): the stream methods call
     *              them when they sleep, and a warm-up that profiled another class there had the
     *              compiled read() deoptimised at the application's first sleep (a class check)
     * @param channels the application uses socket channels too: half of the single-threaded round
     *              trips go through the channel entry points ({@link Buffers}), and the echo's reads and
     *              writes alternate between arrays and buffers
     */
    static boolean run(ShmDirectory directory, ShmSettings settings, int rounds, SocketHooks hooks, boolean channels) {
        return run(directory, settings, rounds, Math.max(1, rounds / 8), hooks, channels);
    }

    /** As above, with {@code echoRounds} round trips on two threads at the end (tests: a long threaded part). */
    static boolean run(ShmDirectory directory, ShmSettings settings, int rounds, int echoRounds, SocketHooks hooks,
                       boolean channels) {
        java.util.Objects.requireNonNull(hooks, "hooks");
        try {
            directory.ensure();
            byte[] secret = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
            Segment seg = unlinkedSegment(directory, 1 << 16, secret);
            Segment ends = unlinkedSegment(directory, 1 << 12, secret);
            if (aborted) return false;
            RingConnection[] ab = connect(seg, settings, hooks);
            RingConnection a = ab[0];
            RingConnection b = ab[1];
            running = ab;
            if (aborted) abortRunning(); // it may have looked before this connection was there to close
            ShmMedium client = (ShmMedium) a.medium();
            ShmMedium server = (ShmMedium) b.medium();
            // the parts on a second thread need futexes: this connection has no channel, so without them
            // (sora.futex.disabled, no libsora) a sleeper's doorbell reaches nobody and the warm-up parked
            // for good, its CPU-pressure exercise left on (found in review, 2026-11-28)
            boolean threads = client.futexMode() && server.futexMode();
            byte[] msg = new byte[LARGE];
            byte[] got = new byte[LARGE];
            Buffers buffers = new Buffers();
            int[] sizes = {64, 512, 4096, 1};
            for (int i = 0; i < rounds; i++) {
                if (aborted) return false;
                int n = sizes[i & 3];
                // now and then each side "waits" across the round trip, so that the publishes take their
                // wake-up branch here: a branch the profile never saw is compiled as a trap, and the
                // first real wait deoptimised the write and read methods (recompiled at the
                // application's first messages, 0.1 s of C2 time, in the nio field row)
                boolean waits = (i & 63) == 32;
                if (waits) {
                    server.announceReaderWaiting(true);
                    client.announceWriterWaiting(true);
                }
                if (!channels || ((i >> 2) & 1) == 0) {
                    roundTrip(a.outputStream(), b.inputStream(), msg, got, n);
                    roundTrip(b.outputStream(), a.inputStream(), got, msg, n);
                } else {
                    // a paired channel's reads and writes (docs/nio.md): buffers, heap and direct, and the
                    // non-blocking read of a selector's loop, which ends on an empty ring
                    buffers.roundTrip(a.outputStream(), b.inputStream(), n, (i & 8) == 0);
                    buffers.roundTrip(b.outputStream(), a.inputStream(), n, (i & 8) != 0);
                }
                if (waits) {
                    server.announceReaderWaiting(false);
                    client.announceWriterWaiting(false);
                }
                if ((i & 63) == 40) {
                    // a write long enough to be published in parts (ShmMedium.publishStep), each way
                    roundTrip(a.outputStream(), b.inputStream(), msg, got, LARGE);
                    roundTrip(b.outputStream(), a.inputStream(), got, msg, LARGE);
                }
                if ((i & 63) == 41) {
                    // a read that empties the ring while the writer is in the middle of a write published in
                    // parts (its end one byte further): the credits wait for the rest. Single-threaded, such
                    // a read never happened before the JIT compiled read(), and the first one (the echo's
                    // long writes below) deoptimised it (-XX:+LogCompilation, 2026-11-28: an unstable_if in
                    // copyOut, 38 ms of C2 time recompiling read() as a cold client's first messages ran).
                    // The next write passes that end, as the rest of the write would.
                    client.publishWriteEnd(server.producedByPeer() + n + 1);
                    roundTrip(a.outputStream(), b.inputStream(), msg, got, n);
                }
                if ((i & 63) == 17) {
                    // single bytes each way: read() and write(int) lock the stream, then take the same
                    // lock again in the array forms; a lock branch (the reentrant acquire) the warm-up
                    // never took was compiled as a trap into the inlined read and write, and an
                    // application's first single-byte read deoptimised them (recompiled by C2 twice during
                    // a cold client's first 300 connections: -XX:+LogCompilation, 2026-11-27)
                    a.outputStream().write(i);
                    if (b.inputStream().read() != (i & 0xff)) throw new IOException("warm-up byte lost");
                    b.outputStream().write(i);
                    if (a.inputStream().read() != (i & 0xff)) throw new IOException("warm-up byte lost");
                }
                if ((i & 255) == 128) endOfStream(ends, settings, hooks);
                if ((i & 255) == 64) readsOfEveryShape(a, b, msg, got, threads && i >= 256 && i < 1024, threads && i == 576);
                if ((i & 511) == 256) {
                    io.sora.transport.WaitProfile.exercise();
                    placements(client, server);
                }
                if ((i & 255) == 0) {
                    for (ShmMedium m : new ShmMedium[] {server, client}) {
                        m.announceReaderWaiting(true);
                        m.announceReaderWaiting(false);
                        m.announceWriterWaiting(true);
                        m.announceWriterWaiting(false);
                        m.wakeLocalReader();
                        m.wakeLocalWriter();
                    }
                    a.inputStream().available();
                }
            }
            if (threads) {
                io.sora.transport.CpuPressure.exercise(true);
                try {
                    pingPong(a, b, msg, got, echoRounds, channels, client, server);
                } finally {
                    io.sora.transport.CpuPressure.exercise(false);
                }
            }
            return !aborted;
        } catch (IOException | RuntimeException e) {
            return false;
        } finally {
            abortRunning(); // the warm-up's connection is closed however it ended
            running = null;
        }
    }

    /**
     * A segment file of this process with both rings of {@code ring} bytes, unlinked as soon as it is mapped
     * (if the JVM dies in between, the next start's sweep of dead processes' segments removes it).
     */
    private static Segment unlinkedSegment(ShmDirectory directory, int ring, byte[] secret) throws IOException {
        Path file = directory.newSegmentPath();
        Segment seg;
        try {
            seg = Segment.create(file, ring, ring, secret);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException gone) {
                e.addSuppressed(gone); // the create's failure is the one that says why
            }
            throw e;
        }
        Files.deleteIfExists(file);
        return seg;
    }

    /** Both ends of one in-process connection on {@code seg}, no channel: the client's, then the server's. */
    private static RingConnection[] connect(Segment seg, ShmSettings settings, SocketHooks hooks) {
        ShmMedium server = new ShmMedium(0, seg, true, null, io.sora.trace.Tracer.OFF, null, settings.futex());
        ShmMedium client = new ShmMedium(0, seg, false, null, io.sora.trace.Tracer.OFF, null, settings.futex());
        return new RingConnection[] {new RingConnection(0, "shm", client, hooks, settings.spinIterations()),
                new RingConnection(0, "shm", server, hooks, settings.spinIterations())};
    }

    /**
     * The reads this thread's round trips never make, each of which an application's first reads do:
     * the ring found empty (a read with a timeout, which waits, is woken with nothing, and times out), a
     * long write read back in pieces (the reader behind, handing credits back in batches), and a read
     * asking for more than is there. Without them the JIT compiled {@code read} from round trips that
     * always found exactly their message, and the warm-up's own threaded round trips then trapped in it
     * ({@code -XX:+LogCompilation}, 2026-11-28: unstable_if in read, more and copyOut, each a C2
     * recompilation of the read taking 25-60 ms of the warm-up a JVM's first connection waits for).
     */
    private static void readsOfEveryShape(RingConnection a, RingConnection b, byte[] msg, byte[] got, boolean late,
                                          boolean lateRoom) throws IOException {
        RingInputStream in = b.inputStream();
        // with this thread's interrupt flag set, its first sleep ends without data and the read sleeps
        // again (a wake-up with nothing to read, which many connections' waits see), then times out
        boolean interrupted = Thread.interrupted();
        Thread.currentThread().interrupt();
        try {
            in.read(got, 0, 1, 1_000L);
            throw new IOException("warm-up read of an empty ring returned");
        } catch (java.net.SocketTimeoutException expected) {
            // nothing was written: the wait ran out, as it should
        } finally {
            Thread.interrupted(); // the read hands the flag back set; the warm-up's own is restored below
            if (interrupted) Thread.currentThread().interrupt();
        }
        // reads that wait and then find their bytes, written by a second thread while the read spins and
        // after it sleeps, and writes that wait for room the same way. The single-threaded rounds never
        // wait, and the echo's waits come after the JIT compiled read and write from them: their
        // found-after-a-wait branches were traps, and a cold JVM's first such waits deoptimised read and
        // write and recompiled them as its first messages ran (-XX:+LogCompilation, 2026-11-28: the nio
        // row's client, 2 runs in 4, 130 ms of C2 in the row; Derby's client, its first ring-full write
        // and its first wait caught before a yield)
        if (late) {
            // the machine crowded and not in turn: a crowded wait sleeps after a few yields, so the waits that
            // are to sleep do so soon (and the profile has both kinds of wait either way)
            io.sora.transport.CpuPressure.exercise(true);
            try {
                for (boolean afterSleep : new boolean[] {false, true}) {
                    new LateEnd(a, b, false, afterSleep).run2();
                    // and (once) a write the ring cannot hold: the writer waits for room (the reader drains it late)
                    if (lateRoom) new LateEnd(a, b, true, afterSleep).run2();
                }
            } finally {
                io.sora.transport.CpuPressure.exercise(false);
            }
        }
        a.outputStream().write(msg, 0, LARGE);
        int left = LARGE;
        while (left > 0) {
            int r = in.read(got, 0, left > PIECE ? PIECE : left + 64);
            if (r <= 0) throw new IOException("warm-up bytes lost");
            left -= r;
        }
    }

    /**
     * One end's call made to wait for a second thread's: a read of {@code a}'s bytes that the second thread
     * writes late, or ({@code writerWaits}) a write the ring cannot hold that the second thread drains late.
     * Late means 2 us after both threads run ({@code afterSleep} false: the wait is caught while it spins,
     * before any yield), or once the waiting end announced its sleep (at most a millisecond later). Bounded:
     * reads wait at most a second for their bytes, and a late call that failed closes the connection's
     * reading end, so the waiting call ends with an error, not a hang (the warm-up then ends). A plain class,
     * no lambdas: the warm-up's CPU is taken from the application's start.
     */
    private static final class LateEnd extends Thread {
        private static final boolean ONE_CPU = Runtime.getRuntime().availableProcessors() == 1;
        private final RingConnection a;
        private final RingConnection b;
        private final boolean writerWaits;
        private final boolean afterSleep;
        private final byte[] bytes;
        private volatile boolean running;
        private IOException failed;

        LateEnd(RingConnection a, RingConnection b, boolean writerWaits, boolean afterSleep) {
            super("sora-warmup-late");
            setDaemon(true);
            this.a = a;
            this.b = b;
            this.writerWaits = writerWaits;
            this.afterSleep = afterSleep;
            this.bytes = new byte[writerWaits ? b.medium().receiveCapacity() + 4096 : 64];
            java.util.Arrays.fill(bytes, (byte) 0x5a);
        }

        @Override
        public void run() {
            running = true;
            long limit = System.nanoTime() + (afterSleep ? 1_000_000L : 2_000L);
            ShmMedium writer = (ShmMedium) a.medium();
            ShmMedium reader = (ShmMedium) b.medium();
            while (!(afterSleep && (writerWaits ? reader.peerWriterAnnounced() : writer.peerReaderAnnounced()))
                    && System.nanoTime() - limit < 0) {
                // on one CPU, waiting for the other to go to sleep: yield, so that it gets there at once (a spin
                // there held the sleeper off for the whole limit: the warm-up 14 ms longer, -Dsora.startup.timing)
                if (afterSleep && ONE_CPU) Thread.yield(); else Thread.onSpinWait();
            }
            try {
                if (writerWaits) {
                    readBounded(b.inputStream(), new byte[bytes.length], bytes);
                } else {
                    a.outputStream().write(bytes, 0, bytes.length);
                }
            } catch (IOException | RuntimeException e) {
                failed = e instanceof IOException io ? io : new IOException(e);
                closeQuietly(b); // the waiting call ends with an error (a write waiting for room too), not a hang
            }
        }

        /** Starts the late thread, makes this thread's call, and waits for the late one's end. */
        void run2() throws IOException {
            start();
            long deadline = System.nanoTime() + 1_000_000_000L;
            while (!running) {
                if (System.nanoTime() - deadline > 0) throw new IOException("warm-up thread did not start");
                Thread.yield();
            }
            if (writerWaits) {
                a.outputStream().write(bytes, 0, bytes.length);
            } else {
                readBounded(b.inputStream(), new byte[bytes.length], bytes);
            }
            try {
                join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("warm-up interrupted");
            }
            if (failed != null) throw failed;
        }
    }

    /** {@code expect.length} bytes into {@code buf}, each wait for them bounded by a second, checked. */
    private static void readBounded(RingInputStream in, byte[] buf, byte[] expect) throws IOException {
        int n = expect.length;
        for (int got = 0; got < n; ) {
            int r = in.read(buf, got, n - got, 1_000_000_000L);
            if (r < 0) throw new IOException("warm-up connection ended");
            got += r;
        }
        if (!java.util.Arrays.equals(buf, 0, n, expect, 0, n)) throw new IOException("warm-up late bytes differ");
    }

    /** The pieces {@link #readsOfEveryShape} reads a long write back in. */
    private static final int PIECE = 3000;

    /**
     * Where each end finds its peer's thread, as an application's waits ask it
     * ({@link io.sora.transport.RingMedium#peerPlacement}): on this CPU, on another, unknown. Both ends
     * of the warm-up's connection run in this process, mostly on one thread, so its waits had found
     * their peer only here, and a cold client's first wait for a peer on the other CPU deoptimised the
     * compiled read it is inlined into ({@code -XX:+LogCompilation}, 2026-11-28: the nio row's client).
     * The CPUs published here are overwritten by the next real wait of either end.
     */
    private static void placements(ShmMedium client, ShmMedium server) {
        server.publishCpu(0);
        for (int cpu : new int[] {0, 1, -1}) {
            client.peerPlacement(cpu);
            server.peerPlacement(cpu);
        }
    }

    /**
     * One short connection on its own small segment, read to its end: a byte, the writer's close, then
     * {@code read()} returning -1 twice (the end found in the peer's flags, then remembered). Without it the
     * compiled read had never seen an end, and the first connection an application read to its end (a
     * server of short connections: each one) deoptimised it (the end-of-stream branch of {@code look},
     * an {@code unstable_if} trap). Run a few times through the warm-up, from its first rounds, so the
     * branch is in the profile before the JIT compiles the read. The segment is reset and used again.
     */
    private static void endOfStream(Segment seg, ShmSettings settings, SocketHooks hooks) throws IOException {
        seg.resetConnectionFields();
        RingConnection[] ends = connect(seg, settings, hooks);
        RingConnection writer = ends[0];
        RingConnection reader = ends[1];
        try {
            writer.outputStream().write(42);
            writer.close();
            RingInputStream in = reader.inputStream();
            if (in.read() != 42) throw new IOException("warm-up connection's byte lost");
            // and as a selector and a channel's non-blocking read find that end (OP_READ, then -1): without
            // them, the first connection a NIO server saw end deoptimised its compiled select and read
            // (-XX:+LogCompilation, 2026-11-28: unstable_if in readable and readNow, 90 ms of C2 time)
            if (!in.readable() || in.readNow(java.nio.ByteBuffer.allocate(16)) != -1) {
                throw new IOException("warm-up connection's end not seen by a selector's read");
            }
            if (in.read() != -1 || in.read() != -1) throw new IOException("warm-up connection's end not seen");
        } finally {
            writer.close();
            reader.close();
        }
        // and a read after this end's own close, as a selector's last look at a channel the application
        // closed makes: without it, that first look deoptimised the compiled read (the closed branch of look
        // and unlock, an unstable_if: the nio row's server, 2026-11-28). At the end already, the read
        // returns the end again, as the JDK's socket does even after a close (2026-11-29)
        if (reader.inputStream().read() != -1) throw new IOException("warm-up connection's end not kept after its close");
    }

    /**
     * Round trips with the echo on a second thread, so that reads and writes wait for each other as
     * an application's do: the waiting code (spinning, yielding, sleeping and being woken) runs and is
     * profiled here. Without it the compiled stream methods had never seen a read wait, and the
     * application's first waits deoptimised and recompiled them on its time.
     */
    private static void pingPong(RingConnection a, RingConnection b, byte[] msg, byte[] got, int rounds,
                                 boolean channels, ShmMedium client, ShmMedium server) throws IOException {
        Thread echo = new Thread(() -> {
            try {
                byte[] buf = new byte[msg.length];
                java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(msg.length);
                for (int i = 0; i < rounds; i++) {
                    int n = size(i);
                    if (!channels || (i & 2) == 0) {
                        readFully(b.inputStream(), buf, n);
                        answerLate(i);
                        b.outputStream().write(buf, 0, n);
                    } else {
                        // a blocking channel's read and write: waiting in read(ByteBuffer, 0)
                        direct.clear().limit(n);
                        while (direct.hasRemaining()) {
                            if (b.inputStream().read(direct, 0) < 0) throw new IOException("warm-up connection ended");
                        }
                        answerLate(i);
                        direct.flip();
                        b.outputStream().write(direct, true);
                    }
                }
            } catch (IOException | RuntimeException | Error e) {
                // an allocation that failed too (a small -XX:MaxDirectMemorySize): the other side's read
                // ends with EOF, not a hang that kept the warm-up thread until the JVM's exit
                closeQuietly(b);
            }
        }, "sora-warmup-echo");
        echo.setDaemon(true);
        echo.start();
        try {
            for (int i = 0; i < rounds; i++) {
                int n = size(i);
                if ((i & 31) == 16) {
                    // as if both threads had moved to other CPUs: the next waits publish a changed CPU, a
                    // branch an application's threads take whenever the scheduler moves them
                    client.publishCpu(-1);
                    server.publishCpu(-1);
                }
                a.outputStream().write(msg, 0, n);
                readFully(a.inputStream(), got, n);
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(a); // the echo's read ends with EOF, not a hang
            closeQuietly(b);
            throw e;
        } finally {
            try {
                echo.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A long write, published in parts: its reader takes the parts as they come ({@code RingInputStream.more}). */
    private static final int LARGE = 20 << 10;

    /** The echo's message sizes: mostly 64 B and 4 KiB, every eighth a long write. */
    private static int size(int round) {
        return (round & 7) == 6 ? LARGE : (round & 1) == 0 ? 64 : 4096;
    }

    /**
     * Makes some of the other side's waits long, as an application's are: answered after its spin
     * phase (which then shrinks: the waiting code's spin-less branch runs) and after its budget (it
     * sleeps in the futex and is woken). A branch the warm-up never took is compiled as a trap, and
     * the application's first wait that took it deoptimised the stream methods on its own time.
     */
    private static void answerLate(int round) {
        int phase = round & 127;
        if (phase >= 64 && phase < 96) {
            long until = System.nanoTime() + 30_000;
            while (System.nanoTime() < until) Thread.onSpinWait();
        } else if (phase >= 96 && phase < 100) {
            java.util.concurrent.locks.LockSupport.parkNanos(500_000);
        }
    }

    /**
     * Round trips through the channel entry points of the ring streams ({@code read(ByteBuffer, long)},
     * {@code write(ByteBuffer, boolean)}, {@code readable()}, {@code writable()}), as a paired channel
     * calls them. Without them a selector server's first messages ran those branches interpreted, and
     * the stream methods compiled by the byte-array round trips were deoptimised by the first buffer
     * (a class the profile had not seen) and compiled again, on the application's time (the `nio`
     * field row: the server's JIT busy through the whole run).
     */
    private static final class Buffers {
        final java.nio.ByteBuffer heap = java.nio.ByteBuffer.allocate(4096);
        final java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(4096);

        void roundTrip(RingOutputStream out, RingInputStream in, int n, boolean useDirect) throws IOException {
            java.nio.ByteBuffer buf = useDirect ? direct : heap;
            buf.clear().limit(n);
            if (!out.writable()) throw new IOException("warm-up ring full");
            while (buf.hasRemaining()) {
                if (out.write(buf, false) == 0) out.write(buf, true);
            }
            buf.clear().limit(n);
            while (buf.hasRemaining() && in.readable()) {
                if (in.readNow(buf) < 0) throw new IOException("warm-up connection ended");
            }
            if (buf.hasRemaining()) throw new IOException("warm-up ring short of " + buf.remaining() + " bytes");
            // the selector loop's last read, and its readiness check: nothing there
            if (in.readNow(buf.clear()) != 0 || in.readable()) throw new IOException("warm-up ring not empty");
        }
    }

    private static void closeQuietly(RingConnection c) {
        try {
            c.close();
        } catch (RuntimeException ignored) {
            // a warm-up only
        }
    }

    private static void readFully(InputStream in, byte[] dst, int n) throws IOException {
        int got = 0;
        while (got < n) {
            int r = in.read(dst, got, n - got);
            if (r < 0) throw new IOException("warm-up connection ended");
            got += r;
        }
    }

    private static void roundTrip(OutputStream out, InputStream in, byte[] src, byte[] dst, int n) throws IOException {
        out.write(src, 0, n);
        readFully(in, dst, n);
    }
}
