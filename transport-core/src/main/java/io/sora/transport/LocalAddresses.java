package io.sora.transport;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;

/**
 * Whether an address belongs to this host: loopback, or assigned to one of its interfaces. The
 * interface list is read once and again on a miss at most once a second (an address added later is
 * found; a flood of foreign addresses costs one enumeration a second).
 */
public final class LocalAddresses {
    private static final long REFRESH_NANOS = 1_000_000_000L;
    private static volatile Set<InetAddress> known = Set.of();
    private static volatile long readNanos = System.nanoTime() - 2 * REFRESH_NANOS;

    private LocalAddresses() {
    }

    public static boolean isLocal(InetAddress a) {
        if (a == null) return false;
        if (a.isLoopbackAddress() || a.isAnyLocalAddress()) return true;
        if (known.contains(a)) return true;
        long now = System.nanoTime();
        if (now - readNanos < REFRESH_NANOS) return false;
        readNanos = now;
        known = read();
        return known.contains(a);
    }

    private static Set<InetAddress> read() {
        Set<InetAddress> all = new HashSet<>();
        try {
            for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                all.addAll(Collections.list(ni.getInetAddresses()));
            }
        } catch (SocketException e) {
            // no list: only loopback counts as local until the next refresh
        }
        return Set.copyOf(all);
    }
}
