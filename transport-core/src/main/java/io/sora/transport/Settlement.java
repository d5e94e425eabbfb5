package io.sora.transport;

import java.time.Duration;

/**
 * What the accept of a connection must still do on its TCP connection once the pairing it met is over,
 * claimed or aborted: a medium's proof of the TCP connection (docs/rdma.md, "Proof of the TCP
 * connection"), made for a pairing when its offer may have gone out ({@link PairingMedium#settlement}).
 * The {@link PairingTable} hands each one to exactly one accept: the one that claimed the pairing or met
 * its abort, or, when the abort came first, the first accept of its key that finds the mark it left.
 */
public interface Settlement {
    /**
     * The accept's result, given the table's {@code result} for the pairing: the same, or a fallback (a
     * paired connection whose proof is missing, dropped), after whatever the TCP connection needs (the
     * proof taken from it, or the connection shut down). Never throws.
     */
    PairingResult settle(PairingResult result, SocketHooks hooks, Duration wait);
}
