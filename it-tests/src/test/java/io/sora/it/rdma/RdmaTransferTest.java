package io.sora.it.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 256 MiB of random bytes in writes of random sizes (1 byte to 1 MiB) over one RDMA-paired
 * connection, read back in reads of random sizes: the SHA-256 at both ends must match, and the
 * receiver must see EOF exactly after the last byte. Runs in the Soft-RoCE VM only.
 */
class RdmaTransferTest {
    static final long TOTAL = 256L << 20;

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void twoHundredFiftySixMebibytesArriveWithTheSameDigest() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ServerSocket server = new ServerSocket(0, 50, RdmaSemanticsTest.rxeAddress());
             Socket client = new Socket(RdmaSemanticsTest.rxeAddress(), server.getLocalPort());
             Socket accepted = server.accept()) {
            assertEquals("rdma", pathOf(client), "client path");
            assertEquals("rdma", pathOf(accepted), "server path");
            Future<byte[]> received = pool.submit(() -> receive(accepted.getInputStream()));
            byte[] sent = send(client.getOutputStream(), client);
            assertArrayEquals(sent, received.get(540, TimeUnit.SECONDS), "SHA-256 of 256 MiB at both ends");
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] send(OutputStream out, Socket s) throws IOException, NoSuchAlgorithmException {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        Random r = new Random(42);
        byte[] chunk = new byte[1 << 20];
        long sent = 0;
        while (sent < TOTAL) {
            int n = (int) Math.min(TOTAL - sent, 1 + r.nextInt(chunk.length));
            r.nextBytes(chunk);
            out.write(chunk, 0, n);
            md.update(chunk, 0, n);
            sent += n;
        }
        s.shutdownOutput();
        return md.digest();
    }

    private static byte[] receive(InputStream in) throws IOException, NoSuchAlgorithmException {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        Random r = new Random(7);
        byte[] buf = new byte[1 << 20];
        long got = 0;
        for (;;) {
            int n = in.read(buf, 0, 1 + r.nextInt(buf.length));
            if (n < 0) break;
            md.update(buf, 0, n);
            got += n;
        }
        assertEquals(TOTAL, got, "bytes received before EOF");
        return md.digest();
    }

    static String pathOf(Socket s) {
        try {
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            Method m = bridge.getMethod("pathOf", Socket.class);
            return (String) m.invoke(null, s);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the sora agent is not attached to this test JVM: " + e, e);
        }
    }
}
