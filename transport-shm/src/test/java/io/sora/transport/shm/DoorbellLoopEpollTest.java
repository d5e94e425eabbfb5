package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The doorbell loop's own epoll set: changed by the threads that register and close, never waking the loop for it. */
class DoorbellLoopEpollTest {
    @TempDir
    Path dir;

    @Test
    void registeringAndClosingDoNotWakeTheLoopAndItsEndsAndBellsStillDo() throws Exception {
        assertTrue(DoorbellLoop.NATIVE, "the epoll set needs libsora and sun.nio.ch, both here");
        assertTrue(DoorbellLoop.get().isNative(), "the JVM's own loop does not use it");
        DoorbellLoop loop = new DoorbellLoop(true);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("s")));
            SocketChannel[] first = pair(server);
            CountDownLatch firstRang = new CountDownLatch(1);
            AtomicInteger firstCalls = new AtomicInteger();
            loop.register(first[0], counting(firstRang, firstCalls));
            loop.register(first[0], counting(new CountDownLatch(1), new AtomicInteger())); // twice: watched once, by the first
            first[1].write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(firstRang.await(10, TimeUnit.SECONDS), "no bell");
            assertEquals(1, firstCalls.get(), "one bell, one call");
            long before = loop.turns();
            // 50 connections registered and closed here, none of them rung: the loop sleeps through all of it
            List<SocketChannel> peers = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                SocketChannel[] p = pair(server);
                loop.register(p[0], counting(new CountDownLatch(1), new AtomicInteger()));
                loop.close(p[0]);
                peers.add(p[1]);
            }
            assertEquals(before, loop.turns(), "registering or closing woke the loop");
            // a channel closed through the loop left the set before its number was reused: the next channel
            // (the same number, as a rule) gets its own bells, the closed one's handler none
            AtomicInteger closedCalls = new AtomicInteger();
            SocketChannel[] a = pair(server);
            loop.register(a[0], counting(new CountDownLatch(1), closedCalls));
            loop.close(a[0]);
            SocketChannel[] b = pair(server);
            CountDownLatch bRang = new CountDownLatch(1);
            loop.register(b[0], counting(bRang, new AtomicInteger()));
            a[1].close(); // its end: no handler of the closed channel hears of it
            b[1].write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(bRang.await(10, TimeUnit.SECONDS), "the new channel's bell was not delivered");
            assertEquals(0, closedCalls.get(), "a closed channel's handler was called");
            // the peer's end wakes the loop, which takes the channel out of its set (it is not reported again)
            AtomicInteger endCalls = new AtomicInteger();
            CountDownLatch ended = new CountDownLatch(1);
            SocketChannel[] c = pair(server);
            loop.register(c[0], (ch, scratch) -> {
                endCalls.incrementAndGet();
                try {
                    if (ch.read(scratch) >= 0) return true;
                } catch (java.io.IOException e) {
                    // the end, as EOF
                }
                ended.countDown();
                return false;
            });
            c[1].close();
            assertTrue(ended.await(10, TimeUnit.SECONDS), "the peer's end was not reported");
            b[1].write(ByteBuffer.wrap(new byte[] {2})); // one more turn of the loop, after the end
            long turns = loop.turns();
            for (int i = 0; i < 1000 && loop.turns() == turns; i++) Thread.sleep(1); // bounded: polls a counter
            assertEquals(1, endCalls.get(), "an ended channel was reported again");
            loop.close(c[0]);
            loop.close(b[0]);
            loop.close(first[0]);
            b[1].close();
            first[1].close();
            for (SocketChannel p : peers) p.close();
        } finally {
            loop.shutdown(10_000);
        }
    }

    /**
     * What acts on a bell channel's descriptor by number (a selector adding it to its own epoll set) runs
     * under {@link DoorbellLoop#whileOpen}: a close waits for it, and nothing runs once the channel is
     * closed, so the number it uses is never one a later file reused. Both loop modes.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aCloseWaitsForAnActionOnTheOpenChannelAndNoneRunsAfterIt(boolean nativeMode) throws Exception {
        DoorbellLoop loop = new DoorbellLoop(nativeMode);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("w")));
            SocketChannel[] c = pair(server);
            loop.register(c[0], counting(new CountDownLatch(1), new AtomicInteger()));
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicBoolean openThroughout = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicInteger returned = new AtomicInteger();
            Thread acting = new Thread(() -> returned.set(loop.whileOpen(c[0], () -> {
                inside.countDown();
                try {
                    boolean released = release.await(10, TimeUnit.SECONDS);
                    openThroughout.set(released && c[0].isOpen());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 7;
            })), "acting");
            acting.start();
            assertTrue(inside.await(10, TimeUnit.SECONDS), "the action did not run on an open channel");
            Thread closing = new Thread(() -> loop.close(c[0]), "closing");
            closing.start();
            // bounded in time, not in turns: until the closer waits for the action (it must not close under
            // it). 10,000 turns were a few milliseconds, and the clean-clone CI's JVM, beside the other
            // suites' JIT threads, once had not started the closer within them (2026-11-25)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (closing.getState() != Thread.State.BLOCKED && closing.isAlive() && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
                Thread.yield();
            }
            assertEquals(Thread.State.BLOCKED, closing.getState(), "the close did not wait for the action");
            assertTrue(c[0].isOpen(), "closed under the action");
            release.countDown();
            acting.join(10_000);
            closing.join(10_000);
            assertTrue(openThroughout.get(), "the channel closed while the action ran");
            assertEquals(7, returned.get());
            assertFalse(c[0].isOpen(), "the close did not happen after the action");
            AtomicInteger ranAfter = new AtomicInteger();
            assertEquals(-1, loop.whileOpen(c[0], ranAfter::incrementAndGet), "an action ran on a closed channel");
            assertEquals(0, ranAfter.get());
            c[1].close();
        } finally {
            loop.shutdown(10_000);
        }
    }

    private static SocketChannel[] pair(ServerSocketChannel server) throws Exception {
        SocketChannel client = SocketChannel.open(server.getLocalAddress());
        SocketChannel accepted = server.accept();
        client.configureBlocking(false);
        return new SocketChannel[] {client, accepted};
    }

    private static DoorbellLoop.Handler counting(CountDownLatch rang, AtomicInteger calls) {
        return (ch, scratch) -> {
            calls.incrementAndGet();
            try {
                int n = ch.read(scratch);
                if (n > 0) rang.countDown();
                return n >= 0;
            } catch (java.io.IOException e) {
                return false;
            }
        };
    }
}
