package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A listener whose accept failed (out of descriptors) pauses accepting on its own thread; an accepting
 * thread's catch-up still accepts, so a connection made once descriptors are back is not put on TCP
 * for the rest of the pause (the CI's DescriptorLimitIT once: "shm shm tcp").
 */
class RendezvousPauseTest {
    @TempDir
    Path dir;

    @Test
    void aCatchUpAcceptsDuringAPauseAndAnAcceptThatWorksEndsIt() throws Exception {
        AtomicInteger announced = new AtomicInteger();
        RendezvousListener.HelloHandler handler = new RendezvousListener.HelloHandler() {
            @Override
            public void onHello(SocketChannel channel, Wire.Hello hello) {
            }

            @Override
            public void onAnnounce(SocketChannel channel) {
                announced.incrementAndGet();
            }
        };
        Path sock = dir.resolve("port-1.sock");
        RendezvousListener listener = new RendezvousListener(sock, 1, handler, false);
        try {
            listener.pauseAccepting(60_000_000_000L); // as a failed accept does, for a minute
            try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                client.connect(UnixDomainSocketAddress.of(sock));
                ShmServerBinding.writeFully(client, Wire.encode(new Wire.Announce()));
                assertTrue(listener.catchUp(), "the catch-up did not accept during the pause: the accept would decide TCP");
                assertEquals(1, announced.get(), "the announcement was not read");
                // the pause is over: a second client is accepted by a plain catch-up as well
                try (SocketChannel second = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                    second.connect(UnixDomainSocketAddress.of(sock));
                    ShmServerBinding.writeFully(second, Wire.encode(new Wire.Announce()));
                    assertTrue(listener.catchUp());
                    assertEquals(2, announced.get());
                }
            }
        } finally {
            listener.close();
        }
    }

    /** A listener thread that fails (not closed) tells its handler, once, with what it threw. */
    @Test
    void aListenerThreadThatFailsTellsItsHandler() throws Exception {
        java.util.concurrent.CompletableFuture<String> failed = new java.util.concurrent.CompletableFuture<>();
        RendezvousListener.HelloHandler handler = new RendezvousListener.HelloHandler() {
            @Override
            public void onHello(SocketChannel channel, Wire.Hello hello) {
            }

            @Override
            public void idle() {
                throw new IllegalStateException("test: the listener's work failed");
            }

            @Override
            public void listenerFailed(String why) {
                failed.complete(why);
            }
        };
        Path sock = dir.resolve("port-2.sock");
        RendezvousListener listener = new RendezvousListener(sock, 2, handler, true);
        try {
            // a connection wakes the listener's thread, whose round of work then fails in idle()
            try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                client.connect(UnixDomainSocketAddress.of(sock));
                String why = failed.get(10, java.util.concurrent.TimeUnit.SECONDS);
                assertTrue(why.contains("test: the listener's work failed"), why);
            }
            assertTrue(!java.nio.file.Files.exists(sock), "its socket file is gone: new clients stay on TCP at once");
        } finally {
            listener.close();
        }
    }
}
