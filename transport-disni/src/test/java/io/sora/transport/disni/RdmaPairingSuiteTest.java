package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sora.trace.Tracer;
import io.sora.transport.AbstractPairingTest;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The pairing suite on the RDMA medium, over {@link FakeVerbs}: the server binding's pairing and the
 * client's message exchange are the production code; what the fakes stand in for is the NIC and the
 * RDMA CM (a connection handed to the binding as a CONNECT_REQUEST would be, ESTABLISHED from the
 * TCP client's address, DISCONNECTED when the other end disconnects). The VM suite runs the real CM.
 */
class RdmaPairingSuiteTest extends AbstractPairingTest {
    @Override
    protected Medium open(InetSocketAddress bound, AcceptPolicy policy) {
        RdmaServerBinding binding = new RdmaServerBinding(bound, bound, policy, Tracer.OFF, 0, 0);
        List<RdmaMedium> clients = new CopyOnWriteArrayList<>();
        return new Medium() {
            /**
             * A connection request accepted by the binding and established from the TCP client's address;
             * made after the TCP connect (the suite's order), so not announced: its request is decided as any
             * unannounced one (RdmaAnnouncedAcceptTest covers announced connections).
             */
            private FakeRdmaConnection link(ConnectionKey key) throws IOException {
                FakeRdmaConnection l = FakeRdmaConnection.open(binding, key.client().getAddress(), options().receiveBufferSize(), false);
                clients.add(l.client());
                return l;
            }

            @Override
            public ServerBinding binding() {
                return binding;
            }

            @Override
            public PairingResult connect(ConnectionKey key, PairingOptions options) {
                boolean paired = false;
                FakeRdmaConnection l = null;
                try {
                    l = link(key);
                    long deadline = System.nanoTime() + options.fallbackWait().toNanos();
                    PairingResult r = RdmaClient.exchange(l.client(), l.clientRing(), key, options, deadline, clientHooks(key), 0);
                    paired = r instanceof PairingResult.Paired;
                    return r;
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    if (!paired && l != null) l.client().abort();
                }
            }

            @Override
            public AutoCloseable offered(ConnectionKey key) throws Exception {
                FakeRdmaConnection l = link(key);
                l.client().qp.postMessage(new RdmaWire.Hello(key, l.clientRing().address(), l.clientRing().rkey(), 4096));
                assertInstanceOf(RdmaWire.Offer.class, l.client().nextMessage(System.nanoTime() + WAIT.toNanos()));
                // as a sora client that gives an offer up: it says so, then drops the connection
                return () -> {
                    RdmaClient.decline(l.client().qp, "its wait ran out");
                    l.client().abort();
                };
            }

            @Override
            public String abandonedReason() {
                return "the client gave the offer up: its wait ran out";
            }

            @Override
            public String noRequestReason(Duration wait) {
                return "client announced no pairing (no sora, or no rdma rule for this server)";
            }

            @Override
            public boolean decidedTcp(ConnectionKey key) {
                return binding.decidedTcp(key);
            }

            @Override
            public boolean releasedUnclaimed() {
                return binding.unclaimedCount() == 0;
            }

            @Override
            public void close() {
                binding.close();
                clients.forEach(RdmaMedium::abort);
            }
        };
    }
}
