package io.sora.transport;

import java.io.IOException;

/**
 * What one medium supplies to the {@link PairingTable}: its own checks of a client's request, its
 * offer, its refusal, the release of what it set up, and the connection of a committed pairing. The
 * table decides when each runs and in which order; the medium's own threads (a rendezvous thread, a
 * completion thread) carry the request in and tell the {@link Pairing} of COMMIT or of the client
 * leaving.
 *
 * <p>All methods but {@link #connection} run on the medium's thread that delivered the request, or,
 * for {@link #release}, on whichever thread aborted the pairing (under its lock: keep it short).
 *
 * @param <L> the medium's link to one requesting client: the channel its request came on (a
 *            rendezvous socket, an RDMA connection) and what the medium sets up for it
 */
public interface PairingMedium<L> {
    /** {@code "shm"} or {@code "rdma"}: names the medium in reasons ("shm listener closed"). */
    String name();

    /**
     * The medium's checks of a request before the accept policy sees it (who asks, whether the key
     * belongs to this listener, sizes): null when the request may go on, else the refusal's reason.
     * An exception refuses it with {@code "pairing check failed: <message>"}.
     */
    String check(L link, ConnectionKey key) throws IOException;

    /**
     * Sets up this side of {@code pairing} (a segment, a registered ring) and sends the OFFER, after
     * {@link Pairing#offered()} returned true; when it returns false the pairing was aborted meanwhile:
     * undo what was set up and return. The medium may abort the pairing itself.
     *
     * @throws IOException when no offer can be made; its message is the reason, sent to the client in a
     *                     NO if no OFFER went out, and the pairing is aborted with it
     */
    void offer(Pairing<L> pairing, PairingOptions options) throws IOException;

    /**
     * On the accepting thread, before it decides a connection whose request is not in the table:
     * delivers every announcement and request the medium has received but not yet handed to the table
     * (see {@link PairingTable#announced}). A medium whose clients announce without waiting for an
     * answer needs this; the default does nothing. Never throws.
     *
     * @return false when it could not read all of them (its listener cannot accept right now: out of
     *         file descriptors, most likely); the table then decides the connection TCP for good,
     *         since an announcement of this very connection may be among those unread
     */
    default boolean catchUp() {
        return true;
    }

    /**
     * An accept waits, at most {@code nanos}, for the requests of the channels {@code pending} announced
     * (see {@link PairingTable}): true if the medium waited itself, where its clients can wake the
     * accepting thread directly; false (the default) to wait for the table's own wake-up, which the
     * medium's threads give when they hand a request in. Called without the table's locks.
     */
    default boolean awaitAnnounced(java.util.Set<Object> pending, long nanos) {
        return false;
    }

    /**
     * On the accepting thread, after the pairing was offered: waits until it is
     * {@link Pairing.State#COMMITTED} or {@link Pairing.State#ABORTED}, at most {@code nanos}, and returns
     * the state then. The default waits for the medium's own thread to tell the pairing; a medium whose
     * accepting thread can read the client's COMMIT itself saves that hand-off (one thread wake-up of
     * every connection's set-up).
     */
    default Pairing.State awaitCommit(Pairing<L> pairing, long nanos) throws InterruptedException {
        return pairing.await(nanos);
    }

    /** Sends NO with {@code reason} on the link and drops it. Never throws. */
    void refuse(L link, String reason);

    /**
     * Releases everything set up for the link, abruptly: its client sees the channel drop (a client
     * that believes it is paired fails loudly rather than writing into a ring nobody reads). Called
     * when a pairing is aborted, and for a committed pairing nobody claimed when the listener closes.
     * Idempotent, never throws.
     */
    void release(L link);

    /** The fast connection of a committed pairing, for the accepted socket; on the accepting thread. */
    FastConnection connection(Pairing<L> pairing, SocketHooks hooks);

    /**
     * What an accept must still do on the TCP connection of {@code link}'s pairing once it is over
     * ({@link Settlement}); null (the default): nothing. Called under the pairing's lock when it is
     * aborted, and by the accept that claims it.
     */
    default Settlement settlement(L link) {
        return null;
    }

    /**
     * How long a committed pairing waits for an accept to claim it before it is released (its client's
     * connection drops, a later accept of its key reports why); negative (the default): for good, until the
     * listener closes, as an accept backlog keeps its connections. A medium whose peers may commit pairings
     * no accept will claim (RDMA: any peer of the client host, for a connection accepted already) limits it.
     */
    default long unclaimedTtlNanos() {
        return -1;
    }
}
