package io.sora.transport.disni;

import io.sora.trace.Tracer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client's RDMA connection to a server binding over {@link FakeVerbs}, as the real CM would make
 * it: handed to the binding as a CONNECT_REQUEST is, ESTABLISHED from the TCP client's address, each
 * end's DISCONNECTED when the other disconnects; the client's receive ring registered.
 *
 * @param server the server's pairing state of the connection
 * @param client the client's medium (its pairing: {@link RdmaClient#exchange})
 * @param clientRing the client's registered receive ring
 */
record FakeRdmaConnection(RdmaLink server, RdmaMedium client, Verbs.Region clientRing) {
    private static final AtomicLong IDS = new AtomicLong(1_000_000);

    /**
     * A connection from the client host {@code from}; {@code announced}: made before the TCP connect, as
     * sora's clients do (false: after it, decided as an unannounced request).
     */
    static FakeRdmaConnection open(RdmaServerBinding binding, InetAddress from, int ringSize, boolean announced) throws IOException {
        FakeVerbs[] v = FakeVerbs.pair();
        long conn = IDS.addAndGet(2);
        RdmaMedium server = new RdmaMedium(conn, new QueuePair(v[1], conn, Tracer.OFF), Tracer.OFF);
        RdmaLink p = binding.accepted(conn, server, null, () -> { }, announced);
        RdmaMedium client = new RdmaMedium(conn + 1, new QueuePair(v[0], conn + 1, Tracer.OFF), Tracer.OFF);
        v[1].onPeerDisconnect(p::disconnected);
        v[0].onPeerDisconnect(() -> client.onDisconnected("peer disconnected (RDMA_CM_EVENT_DISCONNECTED)"));
        p.established(new InetSocketAddress(from, 0));
        return new FakeRdmaConnection(p, client, client.allocateReceiveRing(ringSize));
    }
}
