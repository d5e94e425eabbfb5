package io.sora.it.semantics;

/** The channel suite over shared memory: the agent pairs every loopback channel on shm. */
class ShmChannelSemanticsTest extends AbstractChannelSemanticsTest {
    @Override
    protected String expectedPath() {
        return "shm";
    }
}
