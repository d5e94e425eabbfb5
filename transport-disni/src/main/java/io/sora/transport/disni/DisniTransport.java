package io.sora.transport.disni;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.Announcement;
import io.sora.transport.Availability;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.RingConnection;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * The RDMA transport through IBM DiSNI's verbs layer (never its endpoint layer). Right before the
 * application's TCP connect the client opens an RDMA CM connection to the same address and port (RDMA
 * port space), which announces the pairing to the server; after the connect it pairs that RDMA
 * connection with the TCP connection by HELLO / OFFER / COMMIT messages over SEND/RECV; the bytes then
 * move by RDMA WRITE WITH IMMEDIATE into the receiver's registered ring. See docs/rdma.md.
 *
 * <pre>{@code
 * DisniTransport rdma = DisniTransport.create(tracer);          // probes once
 * if (rdma.availability().isAvailable()) {
 *     ServerBinding b = rdma.listen(boundAddress, policy);       // server JVM, per ServerSocket
 *     PairingResult r = b.awaitPairing(new ConnectionKey(remote, local), wait, hooks);
 *     Announcement a = rdma.announce(remote, options, localEnd);       // client JVM, before its TCP connect
 *     PairingResult c = rdma.connect(new ConnectionKey(local, remote), options, hooks, a); // after it
 * }
 * }</pre>
 *
 * Thread-safe. {@link #connect} and {@link ServerBinding#awaitPairing} never throw; an unavailable
 * transport refuses to listen and falls back on connect, with the probe's cause.
 */
public final class DisniTransport implements Transport {
    /** {@code -Dsora.rdma.disabled=true} turns the transport off (every rdma rule stays on TCP). */
    public static final String DISABLED_PROPERTY = "sora.rdma.disabled";
    /**
     * {@code -Dsora.rdma.selftest=false} skips the start-up self-test (one paired connection to
     * itself, which proves registration and the whole protocol work and warms every code path, so
     * the first real pairing fits JSOR's 100 ms wait).
     */
    public static final String SELF_TEST_PROPERTY = "sora.rdma.selftest";
    /**
     * {@code -Dsora.rdma.wait.min=MILLIS}: the least time an RDMA pairing may take before the
     * connection stays on TCP, whatever the rule's wait. Without it the floor is ten times what the
     * self-test's warm pairing took (at most 5 s): a few milliseconds on RDMA hardware, so rules'
     * waits (JSOR's 100 ms) apply unchanged, but enough on a slow (emulated) machine to pair at all.
     */
    public static final String MIN_WAIT_PROPERTY = "sora.rdma.wait.min";
    private static final long MAX_AUTO_WAIT_NANOS = 5_000_000_000L;

    private final Tracer tracer;
    private final Availability availability;
    private final RdmaProbe.Device device;
    private final int spinIterations;
    private final RdmaClient client;
    private final long minWaitNanos;

    private DisniTransport(Tracer tracer, Availability availability, RdmaProbe.Device device, long minWaitNanos) {
        this.tracer = tracer;
        this.minWaitNanos = minWaitNanos;
        this.availability = availability;
        this.device = device;
        this.spinIterations = RingConnection.spinIterationsFromSystemProperty();
        this.client = new RdmaClient(tracer, spinIterations, null);
    }

    /** Tests: a transport taken as available on {@code device}, without probing (what needs a device fails later). */
    static DisniTransport availableForTests(RdmaProbe.Device device) {
        return new DisniTransport(Tracer.OFF, Availability.available(), device, 0);
    }

    /**
     * Probes once (kill switch, device, memlock limit, native library, event channel, device context)
     * and returns the transport; never throws. An unavailable result is traced as
     * {@code RDMA_UNAVAILABLE} with its cause.
     */
    public static DisniTransport create(Tracer tracer) {
        Objects.requireNonNull(tracer, "tracer");
        try {
            RdmaProbe.Device d = RdmaProbe.probe(tracer);
            long configured = Long.getLong(MIN_WAIT_PROPERTY, -1L);
            if (!Boolean.parseBoolean(System.getProperty(SELF_TEST_PROPERTY, "true"))) {
                return new DisniTransport(tracer, Availability.available(), d, Math.max(0, configured) * 1_000_000L);
            }
            // its own floor is its whole wait: an announcement counts that long (under load in an emulator its
            // HELLO came more than the usual 1 s after its RDMA connection, and the self-test failed)
            long pairing = SelfTest.run(new DisniTransport(Tracer.OFF, Availability.available(), d, SelfTest.WAIT.toNanos()), d.address());
            long floor = configured >= 0 ? configured * 1_000_000L : Math.min(MAX_AUTO_WAIT_NANOS, 10 * pairing);
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.RDMA_DEVICE_OPEN, 0, "rdma", null, "self-test paired in " + pairing / 1000 + " us; pairing wait at least "
                        + floor / 1_000_000L + " ms");
            }
            return new DisniTransport(tracer, Availability.available(), d, floor);
        } catch (IOException | RuntimeException | LinkageError e) {
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.RDMA_UNAVAILABLE, 0, "tcp", e.getMessage(), null);
            }
            return new DisniTransport(tracer, Availability.unavailable(e), null, 0);
        }
    }

    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public Availability availability() {
        return availability;
    }

    /** The RDMA device's IPv4 address (wildcard listens and bind rules use it), if available. */
    public Optional<InetAddress> deviceAddress() {
        return device == null ? Optional.empty() : Optional.of(device.address());
    }

    /**
     * Sets where client RDMA connections bind (JSOR's {@code rdma bind} rule): {@code address} null
     * means the RDMA device's address; ports from {@code lowestPort} while {@code ports} allows them.
     * Null clears it (the CM picks address and port).
     */
    public void setClientBind(InetAddress address, int lowestPort, java.util.function.IntPredicate ports) {
        if (ports == null) {
            client.setBind(null);
            return;
        }
        InetAddress a = address != null ? address : device != null ? device.address() : null;
        client.setBind(a == null ? null : new ClientBind(a, lowestPort, ports));
    }

    /**
     * Starts an RDMA CM listen on {@code bound}'s port, at its address, or at the RDMA device's
     * address when {@code bound} is a wildcard.
     *
     * @throws IOException when unavailable or the address cannot listen for RDMA (e.g. not an RDMA
     *                     interface); serve that server socket over TCP then
     */
    @Override
    public ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) throws IOException {
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(policy, "policy");
        if (!availability.isAvailable()) throw new IOException("rdma unavailable: " + cause());
        if (!bound.getAddress().isAnyLocalAddress() && !(bound.getAddress() instanceof java.net.Inet4Address)) {
            // DiSNI makes an IPv4 socket address of any address (its first four bytes): a server bound to
            // ::1 listened for RDMA on 0.0.0.0, on every device (found in review, 2026-11-28)
            throw new IOException(ipv4Only(bound.getAddress()));
        }
        InetAddress a = bound.getAddress().isAnyLocalAddress() ? device.address() : bound.getAddress();
        RdmaServerBinding b = RdmaServerBinding.listen(bound, new InetSocketAddress(a, bound.getPort()), policy, tracer,
                spinIterations, minWaitNanos);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.CM_EVENT, 0, "rdma", null, "LISTEN " + b.listenAddress() + " bound=" + bound);
        }
        return b;
    }

    /**
     * Right before the TCP connect to {@code server}: the client's RDMA connection to it (see
     * {@link RdmaClient#announce}), which tells the server's accept that a pairing request follows. Null
     * where nothing is announced (unavailable, an IPv6 server): {@link #connect} then says why.
     */
    @Override
    public Announcement announce(InetSocketAddress server, PairingOptions options, LocalEnd local) {
        if (!availability.isAvailable() || server == null || !(server.getAddress() instanceof java.net.Inet4Address)) return null;
        try {
            return client.announce(server, floored(Objects.requireNonNull(options, "options")), Objects.requireNonNull(local, "local"));
        } catch (RuntimeException e) {
            return RdmaClient.Announced.failed("rdma pairing failed: " + e);
        }
    }

    /**
     * After the TCP connect: pairs it over the RDMA connection {@code announced} made before it. A
     * connection not announced so stays on TCP: the server's accept decided it TCP at once, having seen
     * no RDMA connection coming, and an RDMA connection made only now could not be told from one made
     * before the TCP connect.
     */
    @Override
    public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks, Announcement announced) {
        try {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(options, "options");
            Objects.requireNonNull(hooks, "hooks");
            String why = !availability.isAvailable() ? "rdma unavailable: " + cause()
                    // DiSNI would connect to the IPv4 address made of an IPv6 one's first four bytes (another host)
                    : !(key.server().getAddress() instanceof java.net.Inet4Address) ? ipv4Only(key.server().getAddress())
                    : !(key.client().getAddress() instanceof java.net.Inet4Address) ? ipv4Only(key.client().getAddress())
                    : !(announced instanceof RdmaClient.Announced) ? NOT_ANNOUNCED
                    : null;
            if (why != null) {
                if (announced != null) announced.close();
                return new PairingResult.Fallback(why);
            }
            return ((RdmaClient.Announced) announced).pair(key, floored(options), hooks);
        } catch (RuntimeException e) {
            if (announced != null) announced.close();
            return new PairingResult.Fallback("rdma pairing failed: " + e);
        }
    }

    /** Without an announcement: TCP, with the reason (see {@link #connect(ConnectionKey, PairingOptions, SocketHooks, Announcement)}). */
    @Override
    public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
        return connect(key, options, hooks, null);
    }

    /** Why a connection whose RDMA connection was not made before its TCP connect stays on TCP. */
    static final String NOT_ANNOUNCED = "no RDMA connection was made before the TCP connect (an rdma server pairs only those)";

    /** {@code options} with the pairing wait raised to the transport's floor ({@link #MIN_WAIT_PROPERTY}). */
    private PairingOptions floored(PairingOptions options) {
        if (options.fallbackWait().toNanos() >= minWaitNanos) return options;
        return new PairingOptions(options.sendBufferSize(), options.receiveBufferSize(), java.time.Duration.ofNanos(minWaitNanos));
    }

    /** Why an address cannot be served: DiSNI's RDMA CM calls take IPv4 socket addresses only. */
    static String ipv4Only(InetAddress a) {
        return "rdma serves IPv4 addresses only (DiSNI's RDMA CM calls take IPv4 socket addresses): "
                + a.getHostAddress() + " is IPv6";
    }

    /**
     * The client CM thread ends once the last client connection is released; each listener's thread
     * ended with its listener and each connection's completion thread ends with it (see
     * {@link Transport#detach}). The native library stays loaded until the agent's class loader is
     * collected; a later attach loads its own copy (the agent class loader's {@code findLibrary}).
     */
    @Override
    public void detach() {
        RdmaClient.detach();
    }

    /** The least pairing wait in force (see {@link #MIN_WAIT_PROPERTY}). */
    public java.time.Duration minimumWait() {
        return java.time.Duration.ofNanos(minWaitNanos);
    }

    private String cause() {
        return availability.unavailabilityCause().map(Throwable::getMessage).orElse("unknown");
    }
}
