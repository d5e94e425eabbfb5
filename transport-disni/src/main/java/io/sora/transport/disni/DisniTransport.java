package io.sora.transport.disni;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.Availability;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.Transport;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The RDMA medium through IBM DiSNI. Availability is probed once, in order of cost: the kill switch
 * {@code -Dsora.rdma.disabled=true}, an RDMA device under {@code /sys/class/infiniband}, then the
 * native library and the verbs stream engine. The first failing step is the cause reported (and
 * traced at {@code initverbs}); an unavailable transport is never asked to pair, so such connections
 * stay on TCP.
 */
public final class DisniTransport implements Transport {
    private final Tracer tracer;
    private final Availability availability;

    private DisniTransport(Tracer tracer, Availability availability) {
        this.tracer = tracer;
        this.availability = availability;
    }

    /** Probes once and returns the transport; never throws. */
    public static DisniTransport create(Tracer tracer) {
        return new DisniTransport(tracer, probe());
    }

    static Availability probe() {
        if (Boolean.getBoolean("sora.rdma.disabled")) {
            return Availability.unavailable(new IllegalStateException("disabled by -Dsora.rdma.disabled=true"));
        }
        File dir = new File(System.getProperty("sora.rdma.sysfs", "/sys/class/infiniband"));
        String[] devices = dir.list();
        if (devices == null || devices.length == 0) {
            return Availability.unavailable(new IllegalStateException(
                    "no RDMA device (" + dir + " is " + (devices == null ? "missing" : "empty") + ")"));
        }
        return Availability.unavailable(new UnsupportedOperationException(
                "RDMA device(s) " + String.join(",", devices) + " present, but this build has no RDMA stream engine yet"));
    }

    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public Availability availability() {
        return availability;
    }

    @Override
    public ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) throws IOException {
        throw new IOException("rdma unavailable: " + availability.unavailabilityCause().map(Throwable::getMessage).orElse("?"));
    }

    @Override
    public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
        return new PairingResult.Fallback("rdma unavailable: " + availability.unavailabilityCause().map(Throwable::getMessage).orElse("?"));
    }
}
