package io.sora.transport.disni;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.io.File;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The availability probe, run once, cheapest step first: kill switch, a device under
 * {@code /sys/class/infiniband}, enough lockable memory (RLIMIT_MEMLOCK from /proc/self/limits, or
 * CAP_IPC_LOCK), the native library (DiSNI loads {@code libdisni} when the first event channel
 * opens), an event channel, and a CM id bound to the device's IP address that yields a device
 * context. The first failing step is the cause.
 */
final class RdmaProbe {
    /** Memory one connection registers with default rules (rings, shadow, control), rounded up generously. */
    static final long BYTES_PER_CONNECTION = 256 * 1024;
    private static final int CAP_IPC_LOCK = 14;

    /** What a successful probe found. */
    record Device(String name, String netdev, InetAddress address) {}

    private RdmaProbe() {
    }

    /** @throws IOException naming the first missing requirement */
    static Device probe(Tracer tracer) throws IOException {
        if (Boolean.getBoolean(DisniTransport.DISABLED_PROPERTY)) {
            throw new IOException("disabled by -D" + DisniTransport.DISABLED_PROPERTY + "=true");
        }
        File sys = new File(System.getProperty("sora.rdma.sysfs", "/sys/class/infiniband"));
        String[] devices = sys.list();
        if (devices == null || devices.length == 0) {
            throw new IOException("no RDMA device (" + sys + " is " + (devices == null ? "missing" : "empty") + ")");
        }
        checkMemlock(Path.of("/proc/self/limits"), Path.of("/proc/self/status"), BYTES_PER_CONNECTION);
        if (!io.sora.transport.Futex.isAvailable()) {
            // a pairing's proof of the TCP connection is written and read through it (docs/rdma.md)
            throw new IOException("sora's native library is needed for RDMA pairing: "
                    + io.sora.transport.NativeSockets.availability());
        }
        RdmaEventChannel channel;
        try {
            channel = RdmaEventChannel.createEventChannel();
        } catch (UnsatisfiedLinkError | NoClassDefFoundError | ExceptionInInitializerError e) {
            throw new IOException("native library libdisni not loadable: " + e, e);
        }
        try {
            return findDevice(tracer, channel, sys, devices);
        } finally {
            try {
                channel.destroyEventChannel();
            } catch (IOException | RuntimeException e) {
                // probe channel only
            }
        }
    }

    private static Device findDevice(Tracer tracer, RdmaEventChannel channel, File sys, String[] devices) throws IOException {
        List<String> tried = new ArrayList<>();
        for (String dev : devices) {
            for (String netdev : netdevs(sys, dev)) {
                for (InetAddress a : ipv4(netdev)) {
                    RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
                    try {
                        id.bindAddr(new InetSocketAddress(a, 0));
                        IbvContext ctx = id.getVerbs();
                        if (ctx != null) {
                            if (tracer.isOn(Category.JSOR)) {
                                tracer.event(Hook.RDMA_DEVICE_OPEN, 0, "rdma", null, dev + " netdev=" + netdev + " ip="
                                        + a.getHostAddress() + " cmd_fd=" + ctx.getCmd_fd() + " comp_vectors="
                                        + ctx.getNumCompVectors() + " rc=0");
                            }
                            return new Device(dev, netdev, a);
                        }
                        tried.add(a.getHostAddress() + " (no device context)");
                    } catch (IOException e) {
                        tried.add(a.getHostAddress() + " (" + e.getMessage() + ")");
                    } finally {
                        id.destroyId();
                    }
                }
            }
        }
        throw new IOException("RDMA device(s) " + String.join(",", devices) + " present, but none has a usable IPv4 address"
                + (tried.isEmpty() ? " (no netdev with an IPv4 address)" : ": " + tried));
    }

    /** Network devices of an RDMA device: RoCE GID attributes, else every interface (tried in turn). */
    private static List<String> netdevs(File sys, String dev) {
        List<String> out = new ArrayList<>();
        File ports = new File(sys, dev + "/ports");
        String[] ps = ports.list();
        if (ps != null) {
            for (String p : ps) {
                File nd = new File(ports, p + "/gid_attrs/ndevs/0");
                try {
                    String n = Files.readString(nd.toPath()).trim();
                    if (!n.isEmpty() && !out.contains(n)) out.add(n);
                } catch (IOException | RuntimeException e) {
                    // InfiniBand ports have no ndevs entry
                }
            }
        }
        if (out.isEmpty()) {
            try {
                for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                    if (!ni.isLoopback()) out.add(ni.getName());
                }
            } catch (IOException e) {
                // nothing to try
            }
        }
        return out;
    }

    private static List<InetAddress> ipv4(String netdev) {
        List<InetAddress> out = new ArrayList<>();
        try {
            NetworkInterface ni = NetworkInterface.getByName(netdev);
            if (ni == null) return out;
            for (InetAddress a : Collections.list(ni.getInetAddresses())) {
                if (a instanceof Inet4Address) out.add(a);
            }
        } catch (IOException e) {
            // not an interface we can read
        }
        return out;
    }

    /**
     * Registration pins memory: the soft RLIMIT_MEMLOCK must allow {@code need} bytes unless the
     * process has CAP_IPC_LOCK. Unreadable files are not a failure (the registration itself reports).
     */
    static void checkMemlock(Path limits, Path status, long need) throws IOException {
        long soft = memlockSoftLimit(limits);
        if (soft < 0 || soft >= need) return;
        if (hasCapability(status, CAP_IPC_LOCK)) return;
        throw new IOException("locked-memory limit (RLIMIT_MEMLOCK) is " + soft + " bytes; one RDMA connection registers about "
                + need + " bytes: raise it (ulimit -l, LimitMEMLOCK=, /etc/security/limits.conf) or grant CAP_IPC_LOCK");
    }

    /** The soft limit in bytes, {@code Long.MAX_VALUE} for unlimited, -1 when unknown. */
    static long memlockSoftLimit(Path limits) {
        try {
            for (String line : Files.readAllLines(limits)) {
                if (!line.startsWith("Max locked memory")) continue;
                String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                if (f.length == 0) return -1;
                return f[0].toLowerCase(Locale.ROOT).equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(f[0]);
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    static boolean hasCapability(Path status, int cap) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("CapEff:")) {
                    long mask = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                    return (mask & (1L << cap)) != 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }
}
