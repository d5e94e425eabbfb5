package io.sora.transport.shm;

/**
 * A client's choice, per kept segment, of when to kick the server's doorbell thread while it waits for
 * the answer to its next connection's key ({@link NextPairing#awaitAnswer}).
 *
 * <p>Two threads of the server can answer: the application's accepting thread, whose {@code accept()}
 * the client's TCP connect has just woken (it reads the key as it catches up), and the doorbell thread,
 * which reads kept channels between connections and looks at the segment when the client writes a byte
 * there (the kick). The kick is what decides a connection whose server is not in {@code accept()} (busy
 * elsewhere, or a program that connects and accepts on one thread), but where an accept is under way it
 * is a second thread of the server woken for each connection, on a machine whose two CPUs both had work:
 * measured 2026-11-27 (a scratch churn client, 3,000 connections one after another against a server
 * accepting on one thread, both attached), the doorbell thread decided three connections in four,
 * racing the accepting thread that had been woken for the same connection, and the set-up took 109 us
 * a connection; kicking only after 2 ms, 88 us (the accepting thread decided all of them).
 *
 * <p>So: once an accepting thread decided this segment's last connection, the next one waits for an
 * accept four times as long as that one did ({@link #MIN_NANOS} to {@link #MAX_NANOS}), and kicks only if
 * none came by then. Once the doorbell thread decided (no accept came in time), the next ones kick at
 * once, trying the wait again after 8 connections, then after twice as many each time it fails (at
 * most {@link #LAST_PROBE}): a server that rarely accepts costs a late kick's wait only that seldom. A
 * segment's first connection waits the longest ({@link #MAX_NANOS}): the accepting thread of a cold
 * JVM takes hundreds of microseconds. Not thread-safe: used by the one connection of the segment at a time.
 */
final class KickDelay {
    static final long MIN_NANOS = 100_000;
    static final long MAX_NANOS = 2_000_000;
    static final int FIRST_PROBE = 8;
    static final int LAST_PROBE = 1024;
    /**
     * Tests: a segment's first wait instead of {@link #MAX_NANOS} when positive (a cold test JVM's accept can
     * take longer than 2 ms, and its kick then races it).
     */
    static volatile long testFirstWaitNanos;

    /** Whether an accepting thread decided the last connection that gave an answer. */
    private boolean acceptDecides = true;
    /** How long the last answer of an accepting thread took; 0: none yet. */
    private long acceptAnswerNanos;
    private int probeEvery = FIRST_PROBE;
    private int untilProbe;
    /** Whether the current wait is a try of the accept's wait while kicks went at once. */
    private boolean probing;

    /** How long the next connection's wait lasts before it kicks: 0 at once. */
    long next() {
        probing = false;
        if (!acceptDecides) {
            if (--untilProbe > 0) return 0;
            probing = true;
        }
        if (acceptAnswerNanos == 0) return testFirstWaitNanos > 0 ? testFirstWaitNanos : MAX_NANOS;
        return Math.max(MIN_NANOS, Math.min(MAX_NANOS, 4 * acceptAnswerNanos));
    }

    /**
     * The connection was paired: by an accepting thread ({@code byAccept}) after {@code answerNanos}, or by
     * the doorbell thread.
     */
    void paired(boolean byAccept, long answerNanos) {
        if (byAccept) {
            acceptDecides = true;
            acceptAnswerNanos = Math.max(1, answerNanos);
            probeEvery = FIRST_PROBE;
            return;
        }
        if (probing) probeEvery = Math.min(LAST_PROBE, probeEvery * 2);
        if (acceptDecides || probing) untilProbe = probeEvery;
        acceptDecides = false;
    }
}
