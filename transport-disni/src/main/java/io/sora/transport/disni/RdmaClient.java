package io.sora.transport.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.sora.trace.Tracer;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.RingConnection;
import io.sora.transport.SocketHooks;
import io.sora.transport.NativeSockets;
import io.sora.transport.TcpConnection;
import io.sora.transport.Announcement;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The client half of pairing, run by the application's connecting thread: right before its TCP connect,
 * the RDMA CM connect to the same address and port ({@link #announce}: resolve address, route, connect,
 * each bounded by the rule's wait); once the TCP connect returned, HELLO, OFFER or NO over SEND/RECV, the
 * proof written on the TCP connection, COMMIT ({@link Announced#pair}). Every failure is a {@link PairingResult.Fallback} with its reason,
 * and releases what was set up (the server, seeing the RDMA connection drop before COMMIT, keeps the
 * connection on TCP as well).
 *
 * <p>All client CM ids of the agent share one event channel and its thread ({@code sora-rdma-cm}), which
 * ends after a detach once the last of them is released.
 */
final class RdmaClient {
    static final int MAX_RING = io.sora.transport.PairingOptions.MAX_RING;
    private static final int BIND_ATTEMPTS = 64;

    private final Tracer tracer;
    private final int spinIterations;
    private volatile ClientBind bind;
    /** One CM event channel and thread for every client connection of the agent (of this class loader). */
    private static CmLoop loop;
    /** Set at detach ({@link #detach}): no new loop starts. */
    private static boolean detached;
    /**
     * The loop's longest wait for an event: a bounded wait (not forever) lets the loop see a detach
     * while idle. Waking every half second costs an idle JVM nothing measurable.
     */
    static final int LOOP_WAIT_MILLIS = 500;

    RdmaClient(Tracer tracer, int spinIterations, ClientBind bind) {
        this.tracer = tracer;
        this.spinIterations = spinIterations;
        this.bind = bind;
    }

    void setBind(ClientBind bind) {
        this.bind = bind;
    }

    private CmLoop loop() throws IOException {
        synchronized (RdmaClient.class) {
            if (detached) throw new IOException("sora is being detached from this JVM");
            if (loop == null || loop.failure() != null) { // a failed loop ended
                loop = new CmLoop("sora-rdma-cm", tracer, null, LOOP_WAIT_MILLIS);
            }
            loop.setTracer(tracer);
            return loop;
        }
    }

    /**
     * Detach: the shared CM thread ends once the last client connection released its CM id (connections
     * still open keep their DISCONNECTED events until then), and releases the event channel; no
     * pairing starts a new one afterwards.
     */
    static void detach() {
        synchronized (RdmaClient.class) {
            detached = true;
            if (loop != null) loop.closeWhenIdle();
            loop = null;
        }
    }

    /** CM events of one connecting id: queued for the connecting thread, later DISCONNECTED to the medium. */
    private static final class Attempt implements CmLoop.Handler {
        final long conn;
        final RdmaCmId id;
        final LinkedBlockingQueue<EventType> events = new LinkedBlockingQueue<>();
        volatile RdmaMedium medium;
        volatile String loopFailure;

        Attempt(long conn, RdmaCmId id) {
            this.conn = conn;
            this.id = id;
        }

        @Override
        public void onCmEvent(EventType type, RdmaCmEvent event) {
            RdmaMedium m = medium;
            if (type == EventType.RDMA_CM_EVENT_DISCONNECTED && m != null) {
                m.onCmGone("peer disconnected (RDMA_CM_EVENT_DISCONNECTED)");
                return;
            }
            if (type == EventType.RDMA_CM_EVENT_DEVICE_REMOVAL && m != null) {
                m.onCmGone("RDMA device removed (RDMA_CM_EVENT_DEVICE_REMOVAL)");
                return;
            }
            events.add(type);
        }

        @Override
        public long conn() {
            return conn;
        }

        /** The CM loop ended on an error: the connecting thread gives up with the reason. */
        @Override
        public void onLoopFailed(String reason) {
            loopFailure = reason;
            events.add(EventType.RDMA_CM_EVENT_DEVICE_REMOVAL); // wakes expect(), which reports loopFailure
            RdmaMedium m = medium;
            if (m != null) m.pairingFailed(reason);
        }
    }

    /**
     * Before the application's TCP connect: the RDMA CM connect to {@code server} (resolve address, route,
     * connect, each bounded by the rule's wait), so that the server, when it accepts the TCP connection,
     * knows a pairing request follows (it counts an RDMA connection without HELLO as announced, and an
     * accept with none announced is TCP at once: a client without sora never waits). The RDMA connection
     * takes {@code local}'s port (see {@link #bindLocal}). Never null, never throws: a failure is an
     * announcement that carries its reason, for {@link Announced#pair} to report.
     */
    Announced announce(InetSocketAddress server, PairingOptions options, Transport.LocalEnd local) {
        long deadline = System.nanoTime() + options.fallbackWait().toNanos();
        long conn = RingConnection.nextId();
        CmLoop cm;
        RdmaCmId id;
        try {
            cm = loop();
            id = cm.createId();
        } catch (IOException e) {
            return Announced.failed("cannot create an RDMA CM id: " + e.getMessage());
        }
        Attempt a = new Attempt(conn, id);
        cm.register(id, a);
        RdmaMedium medium = null;
        boolean ready = false;
        try {
            String refusal = bindLocal(id, local);
            if (refusal != null) return Announced.failed(refusal);
            id.resolveAddr(null, server, millisLeft(deadline));
            String r = expect(a, EventType.RDMA_CM_EVENT_ADDR_RESOLVED, deadline, "RDMA address resolution of " + server);
            if (r != null) return Announced.failed(r);
            id.resolveRoute(millisLeft(deadline));
            r = expect(a, EventType.RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, "RDMA route resolution to " + server);
            if (r != null) return Announced.failed(r);
            QueuePair qp = QueuePair.open(id, conn, tracer);
            medium = new RdmaMedium(conn, qp, tracer);
            medium.setOnRelease(() -> cm.release(id));
            a.medium = medium;
            Verbs.Region ring = medium.allocateReceiveRing(options.receiveBufferSize());
            RdmaConnParam param = new RdmaConnParam();
            param.setRetry_count((byte) 7);
            param.setRnr_retry_count((byte) 7);
            id.connect(param);
            r = expect(a, EventType.RDMA_CM_EVENT_ESTABLISHED, deadline, "RDMA connect to " + server);
            if (r != null) return Announced.failed(r);
            qp.traceQp("RTS", "connected to " + server);
            ready = true;
            return new Announced(medium, ring, spinIterations, null);
        } catch (IOException | RuntimeException e) {
            return Announced.failed("rdma pairing failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Announced.failed("interrupted while pairing over RDMA");
        } finally {
            if (!ready) {
                if (medium != null) {
                    medium.abort();
                } else {
                    cm.release(id);
                }
            }
        }
    }

    /**
     * A client's RDMA connection made before its TCP connect ({@link #announce}), until the TCP connect
     * returned and {@link #pair} used it, or {@link #close} (the connect failed) dropped it, which the
     * server sees as the announced connection leaving without a request.
     */
    static final class Announced implements Announcement {
        private final RdmaMedium medium;
        private final Verbs.Region ring;
        private final int spinIterations;
        /** Why there is no RDMA connection (everything set up for it is released), or null. */
        private final String failure;
        private final AtomicBoolean taken = new AtomicBoolean();

        private Announced(RdmaMedium medium, Verbs.Region ring, int spinIterations, String failure) {
            this.medium = medium;
            this.ring = ring;
            this.spinIterations = spinIterations;
            this.failure = failure;
        }

        static Announced failed(String reason) {
            return new Announced(null, null, 0, reason);
        }

        /**
         * After the TCP connect named by {@code key}: HELLO, OFFER or NO, COMMIT, within the pairing wait.
         * Paired, or the reason why not (the RDMA connection is then dropped: the server sees it go before
         * COMMIT and keeps the connection on TCP as well).
         */
        PairingResult pair(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
            if (!taken.compareAndSet(false, true)) {
                return new PairingResult.Fallback("the RDMA connection announced before the TCP connect was withdrawn");
            }
            if (failure != null) return new PairingResult.Fallback(failure);
            boolean paired = false;
            try {
                long deadline = System.nanoTime() + options.fallbackWait().toNanos();
                PairingResult result = exchange(medium, ring, key, options, deadline, hooks, spinIterations);
                paired = result instanceof PairingResult.Paired;
                return result;
            } catch (IOException | RuntimeException e) {
                return new PairingResult.Fallback("rdma pairing failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new PairingResult.Fallback("interrupted while pairing over RDMA");
            } finally {
                if (!paired) medium.abort();
            }
        }

        /** The TCP connect failed (or the announcement went unused): the RDMA connection is dropped. */
        @Override
        public void close() {
            if (taken.compareAndSet(false, true) && medium != null) medium.abort();
        }
    }

    /**
     * The pairing messages on an established RDMA connection whose receive ring ({@code ring}) is
     * registered: HELLO, then OFFER or NO, then COMMIT. Paired, or the reason why not; the caller
     * releases the connection when it is not paired.
     */
    static PairingResult exchange(RdmaMedium medium, Verbs.Region ring, ConnectionKey key, PairingOptions options,
                                  long deadline, SocketHooks hooks, int spinIterations) throws IOException, InterruptedException {
        TcpConnection tcp = hooks.tcp();
        if (tcp == null) {
            // the server pairs only a client that proves it owns the TCP connection, by writing on it
            return new PairingResult.Fallback("cannot reach the TCP connection to write the pairing's proof on it ("
                    + NativeSockets.availability() + ")");
        }
        medium.qp.postMessage(new RdmaWire.Hello(key, ring.address(), ring.rkey(), options.receiveBufferSize()));
        RdmaWire.Message reply;
        try {
            reply = medium.nextMessage(deadline);
        } catch (RuntimeException | InterruptedException e) {
            decline(medium.qp, "gave up: " + e.getMessage()); // an OFFER may be on its way (see decline)
            throw e;
        }
        if (reply == null) {
            // an OFFER may be on its way: said, so that the server does not wait for a proof (see decline)
            String why = "no pairing reply within " + options.fallbackWait().toMillis() + " ms";
            decline(medium.qp, why);
            return new PairingResult.Fallback(why);
        }
        if (reply instanceof RdmaWire.No no) return new PairingResult.Fallback(no.reason());
        if (!(reply instanceof RdmaWire.Offer offer)) {
            String why = "unexpected pairing reply " + reply.getClass().getSimpleName();
            decline(medium.qp, why);
            return new PairingResult.Fallback(why);
        }
        String declined = null;
        if (offer.ringSize() <= 0 || offer.ringSize() > MAX_RING) {
            declined = "offer has a " + offer.ringSize() + "-byte ring (1 byte to 256 MiB allowed)";
        } else {
            try {
                medium.allocateSendRing(offer.ringSize(), offer.ringAddress(), offer.rkey());
            } catch (IOException | RuntimeException e) {
                declined = "could not set up the ring the server offered: " + e.getMessage();
            }
        }
        RingConnection connection = null;
        if (declined == null) {
            // made before the proof and the COMMIT: once they are out the server is paired, and a client that
            // failed after them would stay on TCP with its server on RDMA
            try {
                connection = new RingConnection(medium.id, "rdma", medium, hooks, spinIterations);
            } catch (RuntimeException e) {
                declined = "could not set up the paired connection: " + e;
            }
        }
        if (declined != null) {
            // said before the connection drops: the server then knows no proof comes on the TCP connection and
            // hands it to its application at once (else it waits for one, and shuts the connection down)
            decline(medium.qp, declined);
            return new PairingResult.Fallback(declined);
        }
        try {
            // the proof before the COMMIT: a server that has the COMMIT finds the proof on its way or there
            tcp.write(RdmaWire.proof(offer.secret()));
        } catch (IOException e) {
            // nothing written (the descriptor is no longer the connection's, or it failed at once): said, so the
            // server hands the connection over as it is; part of it written: not said (the server must take those
            // bytes out, finding the proof incomplete: it shuts the connection down, which failed anyway)
            String why = "could not write the pairing's proof on the TCP connection: " + e.getMessage();
            if (!(e instanceof TcpConnection.PartlyWritten)) {
                decline(medium.qp, why);
            } else {
                tcp.shutdown(); // the application's bytes must not follow a partial proof (the server shuts it down too)
            }
            return new PairingResult.Fallback(why);
        }
        medium.qp.postMessage(new RdmaWire.Commit(offer.secret()));
        medium.paired();
        return new PairingResult.Paired(connection);
    }

    /**
     * Sends NO with {@code reason} after the HELLO (an OFFER may have come, or be on its way), bounded; the
     * caller then drops the connection. The server, told no proof will come on the TCP connection, hands it
     * to its application as it is; without the NO (it did not get out) it waits for the proof and at length
     * shuts the connection down, since a late proof would reach the application.
     */
    static void decline(QueuePair qp, String reason) {
        qp.sendNo(reason);
    }

    /**
     * Applies the rule's {@code rdma bind}: local address (wildcard = the RDMA device's) and first free
     * port. Without a bind rule the RDMA connection takes the port of the application's socket, bound
     * for it before its TCP connect ({@code local}): an ephemeral RDMA port could be the very port a
     * server on this host listens on for TCP and wants in the RDMA port space too (its RDMA listen would
     * then fail and its connections fall back), while a port the client's TCP socket holds can never be
     * a listening port. If that port is taken in the RDMA space anyway (or the address has no RDMA
     * device), an ephemeral one is used.
     */
    private String bindLocal(RdmaCmId id, Transport.LocalEnd local) {
        ClientBind b = bind;
        if (b == null) {
            try {
                InetSocketAddress tcp = local.bind();
                InetAddress a = tcp.getAddress() instanceof Inet4Address v4 && !v4.isAnyLocalAddress() ? v4 : IPV4_ANY;
                id.bindAddr(new InetSocketAddress(a, tcp.getPort()));
            } catch (IOException | RuntimeException e) {
                // resolveAddr picks an ephemeral port
            }
            return null;
        }
        IOException last = null;
        int port = b.lowestPort();
        for (int i = 0; i < BIND_ATTEMPTS && port <= 65535 && (i == 0 || b.allows(port)); i++, port++) {
            try {
                id.bindAddr(new InetSocketAddress(b.address(), port));
                return null;
            } catch (IOException e) {
                last = e;
                if (port == 0) break;
            }
        }
        return "rdma bind rule: cannot bind the RDMA connection to " + b.address().getHostAddress() + " port "
                + b.lowestPort() + (last == null ? "" : " (" + last.getMessage() + ")");
    }

    private static final InetAddress IPV4_ANY;

    static {
        try {
            IPV4_ANY = InetAddress.getByAddress(new byte[4]);
        } catch (java.net.UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static String expect(Attempt a, EventType wanted, long deadline, String what) throws InterruptedException {
        long left = deadline - System.nanoTime();
        EventType got = left <= 0 ? a.events.poll() : a.events.poll(left, TimeUnit.NANOSECONDS);
        if (got == wanted) return null;
        if (a.loopFailure != null) return what + " failed: " + a.loopFailure;
        if (got == null) return what + " did not complete within the pairing wait";
        if (got == EventType.RDMA_CM_EVENT_REJECTED) return "no sora RDMA listener at the server (" + what + " rejected)";
        return what + " failed: " + got.name();
    }

    private static int millisLeft(long deadline) {
        long ms = (deadline - System.nanoTime()) / 1_000_000L;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ms));
    }
}
