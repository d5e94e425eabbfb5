package io.sora.it.semantics;

/** The semantics suite over shared memory: the agent pairs every loopback connection on shm. */
class ShmSemanticsTest extends AbstractSocketSemanticsTest {
    @Override
    protected String expectedPath() {
        return "shm";
    }
}
