package io.sora.it.rdma;

import io.sora.it.semantics.AbstractChannelSemanticsTest;
import java.net.InetAddress;

/**
 * The channel-semantics suite (blocking and non-blocking {@code SocketChannel}s, selectors, the adaptor
 * streams, file transfers) over RDMA: runs only inside the Soft-RoCE VM (tools/rxe-vm), in the JVM of
 * {@link RdmaSemanticsTest}, with its rule file; the host's surefire runs exclude this package.
 */
public class RdmaChannelSemanticsTest extends AbstractChannelSemanticsTest {
    @Override
    protected String expectedPath() {
        return "rdma";
    }

    @Override
    protected InetAddress address() {
        return RdmaSemanticsTest.rxeAddress();
    }
}
