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
 * the listener closes.
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
        notifyAll();
        return true;
    }

    /** Ends the pairing on TCP with {@code why} (see the class comment); no effect once committed or aborted. */
    public synchronized void abort(String why) {
        if (state.over()) return;
        try {
            table.medium.release(link);
        } finally {
            reason = why;
            table.aborted(this, why);
            state = State.ABORTED;
            notifyAll();
        }
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
