package io.sora.transport.shm;


import io.sora.transport.ConnectionKey;
import io.sora.transport.DirectWords;
import io.sora.transport.Futex;
import io.sora.transport.WireAddresses;
import java.net.InetSocketAddress;
import java.net.ProtocolException;

/**
 * The next connection on a kept segment (see {@link ShmMedium}, "Kept for the next connection"),
 * agreed in the segment's own memory: no frame on the channel, no thread of the listener.
 *
 * <p>One word ({@link Segment#OFF_NEXT}) holds the state, which each side moves on with a
 * compare-and-set, so that the client giving up and the server pairing cannot both win:
 * <pre>
 *   client: 0 (idle) -- ANNOUNCED (before its TCP connect) -- KEYED (after it: the key is written)
 *           KEYED_LATE: keyed without an announcement before the connect
 *           KEYED* -- WITHDRAWN (its pairing wait ran out, or its kept channel ended: TCP)
 *   server: KEYED* -- PAIRED (the connection is shm; the client's wait ends) or REFUSED (TCP, the
 *           reason at {@link #OFF_REASON})
 * </pre>
 * A side that sleeps for the other's move sets its waiting bit ({@link #SERVER_WAITS} or
 * {@link #CLIENT_WAITS}) and sleeps in a futex on the word; every move clears the bits, and the mover
 * wakes the word's sleepers if it cleared one. Measured before this (2026-11-25, kept channels with a
 * HELLO, REOFFER and COMMIT on the channel): four thread hand-offs per set-up (the client's HELLO to the
 * listener's thread, its REOFFER back, the offer to the accepting thread, the COMMIT to it), where TCP
 * has one (the kernel wakes the accepting thread). Now: the kernel wakes the accepting thread, which
 * reads the key in the segment, pairs, and wakes the client. A refusal's reason is written at
 * {@link #OFF_REASON} before REFUSED (not as a NO frame: the doorbell loop reads the channel).
 *
 * <p>The client zeroes the segment's connection fields before it announces (both ends kept it, {@link Segment#OFF_KEPT}: no
 * thread of either touches it), then writes its key: 4 bytes of receive ring size at
 * {@link #OFF_RING}, the two endpoints ({@link WireAddresses}) from {@link #OFF_KEY}. The server writes
 * its connection id at {@link #OFF_SERVER_ID} before PAIRED.
 */
final class NextPairing {
    static final int ANNOUNCED = 1;
    static final int KEYED = 2;
    static final int KEYED_LATE = 3;
    static final int PAIRED = 4;
    static final int REFUSED = 5;
    static final int WITHDRAWN = 6;
    static final int STATE = 0xff;
    static final int SERVER_WAITS = 0x100;
    static final int CLIENT_WAITS = 0x200;
    /** Set with PAIRED when an accepting thread paired (not the doorbell thread after a kick): see {@link KickDelay}. */
    static final int BY_ACCEPT = 0x400;

    static final int OFF_RING = Segment.OFF_NEXT + 4;
    static final int OFF_SERVER_ID = Segment.OFF_NEXT + 8;
    static final int OFF_KEY = Segment.OFF_NEXT + 16;
    /** The key's room: two endpoints of at most 1 + 16 + 2 bytes. */
    static final int KEY_SIZE = 40;
    /**
     * A refusal's reason: u16 length and UTF-8 bytes, in the header's unused part (past every connection
     * field, so the client's reset leaves it; each refusal writes its own length).
     */
    static final int OFF_REASON = 2048;
    static final int REASON_MAX = 1024;
    /** Yields before a waiting side sleeps: the other side's move is usually microseconds away. */
    private static final int YIELDS = 4;
    /**
     * How long a client waiting for its answer keeps yielding before it sleeps, where the machine has a CPU
     * to spare ({@link io.sora.transport.CpuPressure}). The accepting thread the client's connect woke runs
     * either on the client's CPU, where each yield hands it the CPU (a spin there delayed the answer: 87-160
     * us connects against 60-79 us), or on the other, where a yield returns at once and the client sees the
     * answer without the futex wake-up that costs 11-20 us on this project's 2-vCPU VM. Measured 2026-11-27
     * (a scratch churn client, 3,000 connections one after another, twice): connect 52-55 us yielding up
     * to 30 or 100 us, against 59-72 us after four yields.
     */
    static final long YIELD_NANOS = Long.getLong("sora.next.yieldNanos", 50_000);
    private static final boolean MANY_CPUS = Runtime.getRuntime().availableProcessors() > 1;

    private NextPairing() {
    }

    static int state(Segment s) {
        return s.words.getIntAcquire(Segment.OFF_NEXT) & STATE;
    }

    // ---------------------------------------------------------------- client

    /** Before the TCP connect: the segment made ready for the next connection, and announced. */
    static void announce(Segment s) {
        s.resetConnectionFields();
        s.words.setIntRelease(Segment.OFF_NEXT, ANNOUNCED);
    }

    /**
     * After the TCP connect: the key written and published (KEYED; KEYED_LATE if not announced, for which
     * the caller reset the segment's connection fields first). False if the key does not fit (it always
     * does for IPv4 and IPv6) or the state is not what this client left it at.
     */
    static boolean key(Segment s, ConnectionKey key, int receiveRing, boolean announced) {
        // built in an array and copied in at once: interpreted (a cold JVM's first few hundred connections),
        // the direct buffer's accessors cost a dozen calls a byte
        byte[] k = new byte[KEY_SIZE];
        int end = WireAddresses.put(k, 0, key.client());
        if (end >= 0) end = WireAddresses.put(k, end, key.server());
        if (end < 0) return false;
        s.words.copyFrom(k, 0, OFF_KEY, end);
        s.words.setInt(OFF_RING, receiveRing);
        int to = announced ? KEYED : KEYED_LATE;
        if (!announced) {
            s.words.setIntRelease(Segment.OFF_NEXT, to);
            return true;
        }
        return move(s.words, ANNOUNCED, ANNOUNCED, to, SERVER_WAITS) == ANNOUNCED;
    }

    /**
     * Waits for the server's answer until {@code deadline} ({@link System#nanoTime}): PAIRED or REFUSED;
     * WITHDRAWN if the wait ran out (the state then says so, and the server can no longer pair). Runs
     * {@code kick} (the server's doorbell thread then looks too: an accept that is not under way) once
     * {@code kickAfterNanos} passed without an answer, at once for 0 ({@link KickDelay}). It yields (a few
     * times, or up to {@link #YIELD_NANOS} where the machine has a CPU to spare), then it sleeps on the
     * word (until the kick is due, then in slices); {@code sleepInKernel} false (a virtual thread): parks
     * instead. It does not spin: the accepting thread that answers was woken by this thread's TCP connect,
     * often onto this thread's CPU, and measured 2026-11-27 (a scratch churn client, 3,000 connections one
     * after another against a server accepting on one thread), spinning up to 50 us where the machine had
     * a CPU to spare made the connect slower (87-108 us against 75-79 us). While it sleeps it looks at
     * {@code open} every {@link #LOOK_EVERY_NANOS}: false (the kept channel ended: the listener closed, or
     * its process died) withdraws at once instead of waiting out the deadline.
     */
    static int awaitAnswer(Segment s, long deadline, Runnable kick, long kickAfterNanos, boolean sleepInKernel,
                           java.util.function.BooleanSupplier open) {
        DirectWords b = s.words;
        long start = System.nanoTime();
        boolean kicked = kickAfterNanos <= 0;
        if (kicked) kick.run();
        int yields = 0;
        long yieldFor = MANY_CPUS && sleepInKernel && !io.sora.transport.CpuPressure.crowded(start) ? YIELD_NANOS : 0;
        for (;;) {
            int w = b.getIntAcquire(Segment.OFF_NEXT);
            int st = w & STATE;
            if (st != KEYED && st != KEYED_LATE) return st;
            long now = System.nanoTime();
            if (now - deadline >= 0 || (yields >= YIELDS && !open.getAsBoolean())) {
                int was = move(b, KEYED, KEYED_LATE, WITHDRAWN, SERVER_WAITS);
                return was == KEYED || was == KEYED_LATE ? WITHDRAWN : state(s);
            }
            if (!kicked && now - start >= kickAfterNanos) {
                kicked = true;
                kick.run();
            }
            if (yields < YIELDS || now - start < yieldFor) {
                yields++;
                Thread.yield();
                continue;
            }
            long slice = kicked ? LOOK_EVERY_NANOS : Math.min(LOOK_EVERY_NANOS, kickAfterNanos - (now - start));
            sleep(b, w, CLIENT_WAITS, Math.max(1, Math.min(slice, deadline - now)), sleepInKernel);
        }
    }

    /** How often a waiting client looks whether its kept channel is still open. */
    static final long LOOK_EVERY_NANOS = 10_000_000L;

    static long serverId(Segment s) {
        return s.words.getLongAcquire(OFF_SERVER_ID);
    }

    // ---------------------------------------------------------------- server

    /** The key the client wrote (read once its state says KEYED or KEYED_LATE). */
    static Wire.Hello hello(Segment s) throws ProtocolException {
        byte[] k = new byte[KEY_SIZE];
        s.words.copyTo(OFF_KEY, k, 0, KEY_SIZE);
        InetSocketAddress client = WireAddresses.get(k, 0);
        InetSocketAddress server = WireAddresses.get(k, WireAddresses.end(k, 0));
        return new Wire.Hello(new ConnectionKey(client, server), s.words.getInt(OFF_RING));
    }

    /**
     * The connection is shm: true, or false if the client withdrew first. {@code byAccept}: decided by an
     * accepting thread (not by the doorbell thread after a kick), which the client reads with the answer
     * ({@link #pairedByAccept}).
     */
    static boolean pair(Segment s, long serverId, boolean byAccept) {
        s.words.setLongRelease(OFF_SERVER_ID, serverId);
        int was = move(s.words, KEYED, KEYED_LATE, byAccept ? PAIRED | BY_ACCEPT : PAIRED, CLIENT_WAITS);
        return was == KEYED || was == KEYED_LATE;
    }

    /** After PAIRED: whether an accepting thread paired (see {@link #pair}). */
    static boolean pairedByAccept(Segment s) {
        return (s.words.getIntAcquire(Segment.OFF_NEXT) & BY_ACCEPT) != 0;
    }

    /**
     * The connection is TCP, for {@code reason} (null: none given), written where the client reads it
     * ({@link #reason}); no effect once paired or withdrawn.
     */
    static void refuse(Segment s, String reason) {
        int st = state(s);
        if (st != KEYED && st != KEYED_LATE) return;
        byte[] raw = (reason == null ? "" : reason).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int n = Math.min(raw.length, REASON_MAX);
        s.buffer.put(OFF_REASON + 2, raw, 0, n);
        s.buffer.putShort(OFF_REASON, (short) n);
        move(s.words, KEYED, KEYED_LATE, REFUSED, CLIENT_WAITS); // a release: the reason before the state
    }

    /** Why the server refused (read after the state said REFUSED); null if it gave no reason. */
    static String reason(Segment s) {
        int n = Math.min(s.buffer.getShort(OFF_REASON) & 0xffff, REASON_MAX);
        if (n == 0) return null;
        byte[] raw = new byte[n];
        s.buffer.get(OFF_REASON + 2, raw, 0, n);
        return new String(raw, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The client's connect failed after it announced: the announcement is withdrawn (a waiting accept wakes). */
    static void withdraw(Segment s) {
        move(s.words, ANNOUNCED, KEYED, WITHDRAWN, SERVER_WAITS);
    }

    /**
     * An accepting thread waits, at most {@code nanos}, for a client that announced on this segment to
     * write its key. Returns at once if it did (or left).
     */
    static void awaitKeyed(Segment s, long nanos) {
        DirectWords b = s.words;
        long deadline = System.nanoTime() + nanos;
        for (int turn = 0; ; turn++) {
            int w = b.getIntAcquire(Segment.OFF_NEXT);
            if ((w & STATE) != ANNOUNCED) return;
            long left = deadline - System.nanoTime();
            if (left <= 0) return;
            if (turn < YIELDS) {
                Thread.yield();
                continue;
            }
            sleep(b, w, SERVER_WAITS, left, true);
        }
    }

    // ---------------------------------------------------------------- both

    /**
     * Moves the state from {@code from1} or {@code from2} (any waiting bits) to {@code to} (bits
     * cleared), waking the word's sleepers if one of {@code wakeBits} was set. Returns the state found
     * (the move happened if it is one of the two).
     */
    private static int move(DirectWords b, int from1, int from2, int to, int wakeBits) {
        for (;;) {
            int w = b.getIntAcquire(Segment.OFF_NEXT);
            int st = w & STATE;
            if (st != from1 && st != from2) return st;
            if (b.compareAndExchangeInt(Segment.OFF_NEXT, w, to) != w) continue;
            if ((w & wakeBits) != 0) Futex.wake(b.buffer(), Segment.OFF_NEXT, Integer.MAX_VALUE);
            return st;
        }
    }

    /** Sets {@code bit} in the word last read as {@code w} and sleeps while it stays so (at most {@code nanos}). */
    private static void sleep(DirectWords b, int w, int bit, long nanos, boolean inKernel) {
        if (!inKernel) {
            java.util.concurrent.locks.LockSupport.parkNanos(Math.min(nanos, 20_000L));
            return;
        }
        int waiting = w | bit;
        if (waiting != w && b.compareAndExchangeInt(Segment.OFF_NEXT, w, waiting) != w) return; // moved: look again
        Futex.await(b.buffer(), Segment.OFF_NEXT, waiting, nanos);
    }
}
