package io.sora.transport;

/**
 * One pairing on the server, from the client's request until the application's {@code accept()}
 * claims it: {@link State#HELLO} (checked, allowed, its key registered in the {@link PairingTable}),
 * {@link State#OFFERED} (this side set up, the OFFER on its way), then {@link State#COMMITTED} (the
 * client took it; the connection waits to be claimed) or {@link State#ABORTED} (released; the
 * connection is TCP's, with the reason).
 *
 * <p>{@link #abort} does, in this order and under the pairing's lock: the medium releases the link;
 * the key is marked TCP with the reason, so that an accept coming later reports it at once; the state
 * becomes ABORTED and a waiting accept wakes. Whoever sees ABORTED therefore finds the link released
 * and the mark in the table. A committed pairing is never aborted: it lives until claimed, or until
 * the listener closes, or, where the medium sets a limit ({@link PairingMedium#unclaimedTtlNanos}), until it
 * has waited that long for an accept ({@link #expire}: an RDMA peer can commit a pairing for a connection
 * that was accepted already, which no accept will claim; it held the connection's resources until the
 * listener closed).
 *
 * <p>Thread-safe: the medium's threads (request, COMMIT, the client leaving) and the accepting thread
 * all touch it.
 *
 * @param <L> the medium's link (see {@link PairingMedium})
 */
public final class Pairing<L> {
    public enum State {
        HELLO, OFFERED, COMMITTED, ABORTED;

        /** COMMITTED or ABORTED: the pairing no longer waits for its client. */
        public boolean over() {
            return this == COMMITTED || this == ABORTED;
        }
    }

    private final PairingTable<L> table;
    private final ConnectionKey key;
    private final L link;
    private State state = State.HELLO;
    private String reason;
    /** When the COMMIT came, on the table's clock. */
    private long committedAtNanos;
    /** Taken by an accept ({@link #claim}): from then on nothing but that accept releases its link. */
    private boolean claimed;

    Pairing(PairingTable<L> table, ConnectionKey key, L link) {
        this.table = table;
        this.key = key;
        this.link = link;
    }

    public ConnectionKey key() {
        return key;
    }

    public L link() {
        return link;
    }

    /** The medium set this side up and the OFFER is about to go out; false if aborted meanwhile. */
    public synchronized boolean offered() {
        if (state != State.HELLO) return false;
        state = State.OFFERED;
        return true;
    }

    /** The client's COMMIT for the OFFER: true if this committed the pairing, false if it was not offered or is over. */
    public synchronized boolean committed() {
        if (state != State.OFFERED) return false;
        state = State.COMMITTED;
        committedAtNanos = table.now();
        notifyAll();
        return true;
    }

    /** Ends the pairing on TCP with {@code why} (see the class comment); no effect once committed or aborted. */
    public synchronized void abort(String why) {
        if (state.over()) return;
        end(why);
    }

    /** Under this lock: releases the link, marks the key TCP with {@code why}, then ABORTED (the class comment's order). */
    private void end(String why) {
        try {
            table.medium.release(link);
        } finally {
            reason = why;
            table.aborted(this, why);
            state = State.ABORTED;
            notifyAll();
        }
    }

    /** An accept takes the committed pairing; false when it is not committed, taken already, or expired. */
    synchronized boolean claim() {
        if (state != State.COMMITTED || claimed) return false;
        claimed = true;
        return true;
    }

    /**
     * A committed pairing no accept claimed within {@code ttlNanos} of its COMMIT: its link is released (the
     * client sees its connection drop) and its key marked TCP with {@code why}; true if so.
     */
    synchronized boolean expire(long now, long ttlNanos, String why) {
        if (state != State.COMMITTED || claimed || now - committedAtNanos <= ttlNanos) return false;
        end(why);
        return true;
    }

    /**
     * At the listener's close: a committed pairing no accept took is released, and its key marked TCP with
     * {@code why} (the mark keeps the medium's settlement for the accept that may still come); true if so.
     */
    synchronized boolean releaseUnclaimed(String why) {
        if (state != State.COMMITTED || claimed) return false;
        claimed = true; // nobody may take it now
        end(why);
        return true;
    }

    /** Whether an accept took it ({@link #claim}), or the listener's close did. */
    public synchronized boolean isClaimed() {
        return claimed;
    }

    /** Waits until COMMITTED or ABORTED, at most {@code nanos}; returns the state then. */
    public synchronized State await(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (!state.over()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            wait(Math.max(1, left / 1_000_000L));
        }
        return state;
    }

    public synchronized State state() {
        return state;
    }

    /** Why it was aborted; null otherwise. */
    public synchronized String reason() {
        return reason;
    }

    @Override
    public String toString() {
        return "Pairing[" + key + " " + state() + "]";
    }
}
