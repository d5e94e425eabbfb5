package io.sora.it.semantics;

/** The semantics suite over plain TCP, with the agent attached and rules that match nothing (byte-for-byte TCP). */
class TcpSemanticsTest extends AbstractSocketSemanticsTest {
    @Override
    protected String expectedPath() {
        return "tcp";
    }
}
