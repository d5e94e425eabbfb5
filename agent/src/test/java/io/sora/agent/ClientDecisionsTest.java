package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.agent.status.ConnectionRegistry;
import io.sora.rules.Provider;
import io.sora.rules.RuleSet;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.Announcement;
import io.sora.transport.Availability;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A client's announcement, made before its TCP connect, for a medium that names it after the
 * connection's local port (rdma: docs/rdma.md, "Pairing"): the socket is bound for it first, the TCP
 * connect keeps that port, and the pairing after the connect gets the very announcement and a key with
 * that port. Over a recording transport; the Soft-RoCE VM's suites run the real one.
 */
class ClientDecisionsTest {
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final Recording rdma = new Recording();
    private ServerSocket server;
    private ClientDecisions decisions;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) resources.get(i).close();
    }

    /** A transport that binds the local end in its announcement, as rdma does, and records what it saw. */
    private static final class Recording implements Transport {
        InetSocketAddress announcedLocal;
        Duration announcedWait;
        Announcement announcement;
        /** Runs inside announce (another thread's close, say). */
        Runnable during = () -> { };
        volatile boolean withdrawn;
        ConnectionKey pairedKey;
        Announcement pairedWith;

        @Override
        public String name() {
            return "rdma";
        }

        @Override
        public Availability availability() {
            return Availability.available();
        }

        @Override
        public ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public Announcement announce(InetSocketAddress server, PairingOptions options, LocalEnd local) {
            try {
                announcedLocal = local.bind();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            announcedWait = options.fallbackWait();
            during.run();
            announcement = () -> withdrawn = true;
            return announcement;
        }

        /** Counted down as the pairing begins; the pairing then waits for {@link #release}. */
        final java.util.concurrent.CountDownLatch pairing = new java.util.concurrent.CountDownLatch(1);
        volatile java.util.concurrent.CountDownLatch release;

        @Override
        public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks, Announcement announced) {
            pairedKey = key;
            pairedWith = announced;
            pairing.countDown();
            java.util.concurrent.CountDownLatch r = release;
            try {
                if (r != null && !r.await(30, java.util.concurrent.TimeUnit.SECONDS)) throw new AssertionError("never released");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return new PairingResult.Fallback("recorded");
        }

        @Override
        public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
            return connect(key, options, hooks, null);
        }
    }

    private void setUp() throws Exception {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        resources.add(server);
        RuleSet rules = RuleSet.parse("client.conf", "rdma connect 127.0.0.1 " + server.getLocalPort() + " wait=3s");
        decisions = new ClientDecisions(rules, Map.of(Provider.RDMA, rdma), new PathRecorder(Tracer.OFF, new ConnectionRegistry()));
    }

    private void accepted() throws IOException {
        resources.add(server.accept());
    }

    @Test
    void anUnboundSocketIsBoundForTheAnnouncementAndConnectsFromThatPort() throws Exception {
        setUp();
        Socket s = new Socket();
        resources.add(s);
        decisions.connecting(s, server.getLocalSocketAddress());
        assertTrue(s.isBound(), "bound before the TCP connect");
        int port = s.getLocalPort();
        assertEquals(port, rdma.announcedLocal.getPort());
        s.connect(server.getLocalSocketAddress());
        accepted();
        assertEquals(port, s.getLocalPort(), "the TCP connect kept the port the announcement named");
        decisions.connected(s);
        assertSame(rdma.announcement, rdma.pairedWith, "the pairing took the announcement");
        assertEquals(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), rdma.pairedKey.client());
    }

    @Test
    void aSocketTheApplicationBoundKeepsItsPort() throws Exception {
        setUp();
        Socket s = new Socket();
        resources.add(s);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int port = s.getLocalPort();
        decisions.connecting(s, server.getLocalSocketAddress());
        assertEquals(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), rdma.announcedLocal);
    }

    /**
     * Another thread that asks for a socket's stream while its connect is still pairing (the JDK marks the
     * socket connected first) waits for the decision, so it gets the stream of the path decided.
     */
    @Test
    void aStreamAskedForWhileThePairingRunsWaitsForItsDecision() throws Exception {
        setUp();
        rdma.release = new java.util.concurrent.CountDownLatch(1);
        Socket s = new Socket();
        resources.add(s);
        decisions.connecting(s, server.getLocalSocketAddress());
        s.connect(server.getLocalSocketAddress());
        accepted();
        Thread connecting = new Thread(() -> decisions.connected(s), "connecting");
        connecting.start();
        assertTrue(rdma.pairing.await(30, java.util.concurrent.TimeUnit.SECONDS), "the pairing began");
        java.util.concurrent.atomic.AtomicBoolean waited = new java.util.concurrent.atomic.AtomicBoolean();
        Thread asking = new Thread(() -> waited.set(decisions.awaitDecision(s)), "asking");
        asking.start();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (asking.getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > deadline) throw new AssertionError("the asking thread did not wait: " + asking.getState());
            Thread.onSpinWait();
        }
        // one that holds the socket's monitor does not wait: the connecting thread may need it (JDK 17's
        // synchronized getSoTimeout), and would wait for it in turn
        boolean[] heldWaited = new boolean[1];
        Thread holding = new Thread(() -> {
            synchronized (s) {
                heldWaited[0] = decisions.awaitDecision(s);
            }
        }, "holding");
        holding.start();
        holding.join(30_000);
        assertFalse(holding.isAlive(), "a thread holding the socket's monitor waited for the decision");
        assertFalse(heldWaited[0]);
        rdma.release.countDown();
        asking.join(30_000);
        connecting.join(30_000);
        assertTrue(waited.get(), "it waited for the decision");
        assertFalse(decisions.awaitDecision(s), "nothing to wait for once decided");
    }

    /** A channel closed by another thread while its announcement was made: withdrawn, not left to the sweep. */
    @Test
    void anAnnouncementWhoseChannelClosedMeanwhileIsWithdrawn() throws Exception {
        setUp();
        SocketChannel ch = SocketChannel.open();
        resources.add(ch);
        rdma.during = () -> {
            try {
                ch.close();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        };
        decisions.announce(ch, server.getLocalSocketAddress(), null);
        assertTrue(rdma.withdrawn, "the RDMA connection announced for a closed channel is dropped");
    }

    @Test
    void aNonBlockingChannelIsBoundAndItsAnnouncementTakesTheShorterWait() throws Exception {
        setUp();
        SocketChannel ch = SocketChannel.open();
        resources.add(ch);
        ch.configureBlocking(false);
        assertNull(ch.getLocalAddress(), "unbound at first");
        decisions.announce(ch, server.getLocalSocketAddress(), Duration.ofMillis(20));
        InetSocketAddress local = (InetSocketAddress) ch.getLocalAddress();
        assertEquals(local.getPort(), rdma.announcedLocal.getPort());
        assertEquals(Duration.ofMillis(20), rdma.announcedWait, "capped at the non-blocking connect's wait");
    }
}
