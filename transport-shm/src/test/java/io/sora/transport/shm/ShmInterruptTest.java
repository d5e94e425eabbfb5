package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thread whose interrupt status is set may read and write a socket as before (java.net.Socket on a
 * platform thread ignores it): here its writes ring the doorbell of a peer that sleeps waiting for one
 * (futexes off, busy-waiting off), and the connection must carry on, the status kept.
 */
class ShmInterruptTest {
    @TempDir
    Path tmp;

    @Test
    void anInterruptedWriterRingsTheBellAndTheConnectionLives() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096, new ShmSettings(tmp, 0, false))) {
            ShmFixture.Pair p = fx.pair();
            p.clientHooks().soTimeout = 10_000;
            p.serverHooks().soTimeout = 10_000;
            int rounds = 200;
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                try {
                    InputStream in = p.server().inputStream();
                    OutputStream out = p.server().outputStream();
                    for (int i = 0; i < rounds; i++) {
                        int b = in.read();
                        if (b < 0) throw new java.io.IOException("EOF at round trip " + i);
                        out.write(b ^ 0x5a);
                    }
                } catch (java.io.IOException e) {
                    throw new RuntimeException(e);
                }
            });
            InputStream in = p.client().inputStream();
            OutputStream out = p.client().outputStream();
            Thread.currentThread().interrupt();
            try {
                for (int i = 0; i < rounds; i++) {
                    out.write(i & 0x7f);
                    assertEquals((i & 0x7f) ^ 0x5a, in.read(), "round trip " + i);
                }
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status was cleared");
            } finally {
                Thread.interrupted();
            }
            echo.get(30, TimeUnit.SECONDS);
            long[] s = ((ShmMedium) ((io.sora.transport.RingConnection) p.server()).medium()).sleeps();
            assertTrue(s[1] > 0, "the server never slept waiting for a bell: the test proved nothing");
        }
    }
}
