package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * At JVM shutdown the doorbell thread must leave epoll_wait and end: HotSpot's exit waits up to 300 ms
 * for threads blocked in native code.
 */
class DoorbellLoopShutdownTest {
    @TempDir
    Path dir;

    private static Thread doorbellThread(Thread[] before) {
        Thread[] all = new Thread[Thread.activeCount() + 16];
        int n = Thread.enumerate(all);
        outer:
        for (int i = 0; i < n; i++) {
            if (!all[i].getName().equals("sora-shm-doorbell")) continue;
            for (Thread b : before) if (b == all[i]) continue outer;
            return all[i];
        }
        return null;
    }

    @ParameterizedTest(name = "native epoll set: {0}")
    @ValueSource(booleans = {true, false})
    void shutdownEndsTheLoopThreadAndNothingRegistersAfterwards(boolean nativeSet) throws Exception {
        assertTrue(!nativeSet || DoorbellLoop.NATIVE, "the epoll set needs libsora and sun.nio.ch, both here");
        Thread[] before = new Thread[Thread.activeCount() + 16];
        Thread[] existing = java.util.Arrays.copyOf(before, Thread.enumerate(before));
        DoorbellLoop loop = new DoorbellLoop(nativeSet);
        Path sock = dir.resolve("s");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(sock));
            SocketChannel accepted = server.accept();
            client.configureBlocking(false);
            CountDownLatch rang = new CountDownLatch(1);
            loop.register(client, (ch, scratch) -> {
                rang.countDown();
                return true;
            });
            accepted.write(java.nio.ByteBuffer.wrap(new byte[] {1}));
            assertTrue(rang.await(10, TimeUnit.SECONDS), "the loop dispatched a doorbell");
            Thread t = doorbellThread(existing);
            assertTrue(t != null && t.isAlive(), "this loop's thread runs");

            loop.shutdown(10_000);
            assertFalse(t.isAlive(), "the thread ended");
            assertThrows(IOException.class, () -> loop.register(client, (ch, scratch) -> true));
            client.close();
            accepted.close();
        }
    }
}
