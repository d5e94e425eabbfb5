package io.sora.it.rdma;

import io.sora.it.semantics.AbstractSocketSemanticsTest;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The socket-semantics suite over RDMA: runs only inside the Soft-RoCE VM (tools/rxe-vm), in a JVM
 * started with the agent and an rdma rule file for the rxe address ({@code run-rdma-suite.sh}); the
 * host's surefire runs exclude this package.
 */
public class RdmaSemanticsTest extends AbstractSocketSemanticsTest {
    @Override
    protected String expectedPath() {
        return "rdma";
    }

    @Override
    protected InetAddress address() {
        return rxeAddress();
    }

    /** {@code $RXE_IP} (set by the VM), else 192.168.77.1. */
    static InetAddress rxeAddress() {
        try {
            return InetAddress.getByName(System.getenv().getOrDefault("RXE_IP", "192.168.77.1"));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("bad RXE_IP: " + e.getMessage(), e);
        }
    }
}
