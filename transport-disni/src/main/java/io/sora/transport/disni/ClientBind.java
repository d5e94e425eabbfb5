package io.sora.transport.disni;

import java.net.InetAddress;
import java.util.Objects;
import java.util.function.IntPredicate;

/**
 * Where a client binds its RDMA connections (JSOR's {@code rdma bind ADDRESS PORTS} rule): the
 * address (a wildcard rule is resolved to the RDMA device's address by the caller) and the lowest
 * port of the rule, trying the following ports of the rule while one is taken; port 0 = ephemeral.
 *
 * @param address    local RDMA address
 * @param lowestPort first port to try (0: let the CM choose)
 * @param ports      which ports the rule allows
 */
public record ClientBind(InetAddress address, int lowestPort, IntPredicate ports) {
    public ClientBind {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(ports, "ports");
        if (lowestPort < 0 || lowestPort > 65535) throw new IllegalArgumentException("lowestPort must be 0..65535: " + lowestPort);
    }

    boolean allows(int port) {
        return ports.test(port);
    }
}
