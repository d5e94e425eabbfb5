package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A socket stream's read takes {@code SO_TIMEOUT} as it begins, as the JDK's does: a timeout set by another
 * thread while the read is under way is the next read's, and does not end this one.
 */
class RingReadTimeoutTest {
    /** A 16-byte ring the peer fills when told; its first look at the peer's cursor sets the socket's timeout. */
    static final class Peer extends ScriptedMedium {
        final TestHooks hooks;
        volatile boolean looked;

        Peer(TestHooks hooks) {
            this.hooks = hooks;
        }

        @Override
        public long producedByPeer() {
            if (!looked) {
                looked = true;
                hooks.soTimeout = 50; // another thread's setSoTimeout, right after the read began
            }
            return produced;
        }
    }

    @Test
    void aTimeoutSetWhileAReadIsUnderWayDoesNotEndThatRead() throws Exception {
        TestHooks hooks = new TestHooks();
        Peer m = new Peer(hooks);
        RingConnection c = new RingConnection(RingConnection.nextId(), "test", m, hooks, 0);
        CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
            try {
                byte[] b = new byte[4];
                int n = c.inputStream().read(b);
                return java.util.Arrays.copyOf(b, n);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, TestThreads.OWN);
        // the read looked at the ring (the timeout was set then), bounded
        for (int i = 0; i < 10_000 && !m.looked; i++) Thread.sleep(1);
        assertEquals(true, m.looked, "the read never looked at the ring");
        // four times the timeout set meanwhile: a read that took it would have thrown by then
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
        while (System.nanoTime() - until < 0 && !read.isDone()) Thread.sleep(5);
        assertFalse(read.isDone(), "the read ended: " + read);
        assertEquals(50, hooks.soTimeout, "the timeout was set while the read waited");
        m.deliver(3);
        assertArrayEquals(new byte[] {'p', 'p', 'p'}, read.get(10, TimeUnit.SECONDS));
    }
}
