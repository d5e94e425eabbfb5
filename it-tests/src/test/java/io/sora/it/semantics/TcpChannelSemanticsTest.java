package io.sora.it.semantics;

/** The channel suite over plain TCP, with the agent attached and rules that match nothing. */
class TcpChannelSemanticsTest extends AbstractChannelSemanticsTest {
    @Override
    protected String expectedPath() {
        return "tcp";
    }
}
