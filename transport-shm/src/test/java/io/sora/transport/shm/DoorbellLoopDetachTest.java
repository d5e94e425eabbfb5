package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * At detach the doorbell thread ends once its last channel is gone (connections still open keep their
 * doorbells until then), and a channel registered afterwards gets a loop again, which ends the same way.
 */
class DoorbellLoopDetachTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "native epoll set: {0}")
    @ValueSource(booleans = {true, false})
    void theLoopEndsWithItsLastChannelAfterADetachAndRestartsForALateOne(boolean nativeSet) throws Exception {
        assertTrue(!nativeSet || DoorbellLoop.NATIVE, "the epoll set needs libsora and sun.nio.ch, both here");
        DoorbellLoop loop = new DoorbellLoop(nativeSet);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("s")));
            SocketChannel[] first = pair(server);
            CountDownLatch rang = register(loop, first[0]);
            Thread t = loop.thread();
            assertNotNull(t, "the loop runs");

            loop.closeWhenIdle();
            first[1].write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(rang.await(10, TimeUnit.SECONDS), "a connection open at the detach still gets its doorbells");
            assertTrue(t.isAlive(), "the loop serves the open channel");

            first[1].close(); // the peer goes: EOF, the key is cancelled, nothing is left
            t.join(10_000);
            assertFalse(t.isAlive(), "the loop thread ended with its last channel");
            assertNull(loop.thread());

            SocketChannel[] late = pair(server); // a pairing that raced the detach
            CountDownLatch lateRang = register(loop, late[0]);
            Thread t2 = loop.thread();
            assertNotNull(t2, "a late registration starts a loop again");
            late[1].write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(lateRang.await(10, TimeUnit.SECONDS));
            late[0].close(); // closed on this side: the channel's key goes with it
            loop.wakeup();
            t2.join(10_000);
            assertFalse(t2.isAlive(), "the late loop ended with its channel too");
            first[0].close();
            late[1].close();
        }
    }

    /**
     * The CI's DetachReleasesEverythingIT, 2026-11-25: a kept channel's end closes its channel through the
     * loop on the application's thread at its close (no event for the loop), and a detached loop whose
     * last channel went so slept for ever: a doorbell thread per detach left in the process.
     */
    @org.junit.jupiter.api.Test
    void aDetachedLoopEndsWhenAnotherThreadClosesItsLastChannel() throws Exception {
        assertTrue(DoorbellLoop.NATIVE, "the epoll set needs libsora and sun.nio.ch, both here");
        DoorbellLoop loop = new DoorbellLoop(true);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("s")));
            SocketChannel[] ends = pair(server);
            register(loop, ends[0]);
            Thread t = loop.thread();
            assertNotNull(t, "the loop runs");
            long turns = loop.turns();
            loop.closeWhenIdle();
            // the detach's own wake-up seen (the loop is not idle then), and the loop back in its wait
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((loop.turns() == turns || !inEpollWait(t)) && System.nanoTime() - until < 0) Thread.onSpinWait();
            assertTrue(loop.turns() > turns && inEpollWait(t), "the loop waits, serving the open channel");
            loop.close(ends[0]); // on this thread, as a kept channel's end is at its close: no event
            t.join(10_000);
            assertFalse(t.isAlive(), "the loop thread ended with its last channel");
            ends[1].close();
        }
    }

    /**
     * The CI, 2026-11-27: the selector's loop, detached, read a channel's end during its own idle check
     * (the peer closed right after the loop's last dispatch); the key it cancelled there still counted
     * until the next selection, so the loop waited again with nothing left to wake it. Here the handler
     * closes the peer itself on the byte, so the end is always read in that idle check.
     */
    @ParameterizedTest(name = "native epoll set: {0}")
    @ValueSource(booleans = {true, false})
    void aChannelEndReadDuringTheIdleCheckEndsADetachedLoop(boolean nativeSet) throws Exception {
        DoorbellLoop loop = new DoorbellLoop(nativeSet && DoorbellLoop.NATIVE);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("s")));
            SocketChannel[] ends = pair(server);
            CountDownLatch rang = new CountDownLatch(1);
            loop.closeWhenIdle(); // before the first registration: the loop starts detached, one wake-up
            loop.register(ends[0], (c, scratch) -> {
                try {
                    int n = c.read(scratch);
                    if (n > 0) {
                        ends[1].close(); // the peer goes before this dispatch returns
                        rang.countDown();
                    }
                    return n >= 0;
                } catch (java.io.IOException e) {
                    return false;
                }
            });
            Thread t = loop.thread();
            assertNotNull(t, "the loop runs");
            // the channel watched and the loop back in its wait, its one wake-up (the registration's) spent
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!(watched(loop, ends[0]) && inNativeWait(t)) && System.nanoTime() - until < 0) Thread.onSpinWait();
            assertTrue(watched(loop, ends[0]) && inNativeWait(t), "the loop waits, watching the channel");
            ends[1].write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(rang.await(10, TimeUnit.SECONDS), "the byte was read");
            t.join(10_000);
            assertFalse(t.isAlive(), "the loop thread ended with its last channel");
            assertNull(loop.thread());
            ends[0].close();
        }
    }

    /** Whether the loop watches {@code ch}: its selector holds a key of it (the epoll set's is made at once). */
    private static boolean watched(DoorbellLoop loop, SocketChannel ch) {
        java.nio.channels.Selector s = loop.selector();
        return loop.isNative() || (s != null && ch.keyFor(s) != null);
    }

    /** Whether {@code t} is in a native wait (its top frame: the epoll set's or the selector's). */
    private static boolean inNativeWait(Thread t) {
        StackTraceElement[] st = t.getStackTrace();
        return st.length > 0 && st[0].isNativeMethod();
    }

    /** Whether {@code t} is in the epoll set's native wait (its top frame). */
    private static boolean inEpollWait(Thread t) {
        StackTraceElement[] st = t.getStackTrace();
        return st.length > 0 && st[0].isNativeMethod() && st[0].getMethodName().equals("wait0");
    }

    private static SocketChannel[] pair(ServerSocketChannel server) throws Exception {
        SocketChannel client = SocketChannel.open(server.getLocalAddress());
        SocketChannel accepted = server.accept();
        client.configureBlocking(false);
        return new SocketChannel[] {client, accepted};
    }

    /** Registers a handler that counts down on the first byte and reports EOF as the end of the channel. */
    private static CountDownLatch register(DoorbellLoop loop, SocketChannel ch) throws Exception {
        CountDownLatch rang = new CountDownLatch(1);
        loop.register(ch, (c, scratch) -> {
            try {
                int n = c.read(scratch);
                if (n > 0) rang.countDown();
                return n >= 0;
            } catch (java.io.IOException e) {
                return false;
            }
        });
        return rang;
    }
}
