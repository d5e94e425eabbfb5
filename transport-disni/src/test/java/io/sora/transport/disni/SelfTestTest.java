package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.AcceptPolicy;
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
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The start-up self-test's own logic, over a transport whose client never pairs. */
class SelfTestTest {
    /**
     * A client that fails at once (no announcement on RDMA, say) ends the self-test's accept now: the
     * accept's wait ends because the self-test closed its listener, not by waiting out its 20 s (which it
     * did until 2026-11-29: the application's start-up 20 s late on such a host).
     */
    @Test
    void aClientThatFailsAtOnceEndsTheAcceptsWaitByClosingTheListener() {
        CountDownLatch closed = new CountDownLatch(1);
        AtomicReference<String> acceptEnded = new AtomicReference<>("not yet");
        Transport failing = new Transport() {
            @Override
            public String name() {
                return "fake";
            }

            @Override
            public Availability availability() {
                return Availability.available();
            }

            @Override
            public ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) {
                return new ServerBinding() {
                    @Override
                    public PairingResult awaitPairing(ConnectionKey key, Duration wait, SocketHooks hooks) {
                        try {
                            acceptEnded.set(closed.await(wait.toMillis(), TimeUnit.MILLISECONDS)
                                    ? "by the listener's close" : "waited out its " + wait);
                        } catch (InterruptedException e) {
                            acceptEnded.set("interrupted");
                        }
                        return new PairingResult.Fallback("listener closed");
                    }

                    @Override
                    public void close() {
                        closed.countDown();
                    }
                };
            }

            @Override
            public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
                return new PairingResult.Fallback("no route to the device");
            }
        };
        IOException e = assertThrows(IOException.class, () -> SelfTest.run(failing, InetAddress.getLoopbackAddress()));
        assertTrue(e.getMessage().contains("client did not pair: no route to the device"), e.getMessage());
        assertEquals("by the listener's close", acceptEnded.get());
    }
}
