package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Tracer;
import io.sora.transport.Futex;
import io.sora.transport.RingConnection;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A closed connection gives its rings' shared memory back once both ends are done with them, not when
 * the garbage collector unmaps the segment: the segment's file (kept linked here so its allocation can
 * be read) holds the whole segment while either end is open, and only the header after both closed.
 * Both ends on one segment, each with its own mapping and control channel, as two processes have them;
 * the file is on tmpfs ({@code /dev/shm}), as sora's segments are.
 */
class ShmRingsReleaseTest {
    private static final int RING = 1 << 16;
    private static final long SEGMENT = Segment.sizeFor(RING, RING);

    private Path dir;
    private ServerSocketChannel rendezvous;
    private SocketChannel[] control;

    @BeforeEach
    void setUp() throws IOException {
        assertTrue(Futex.isAvailable(), () -> "libsora did not load: " + Futex.availability().unavailabilityCause().orElse(null));
        dir = Files.createTempDirectory(Path.of("/dev/shm"), "sora-rings-test-");
        rendezvous = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        rendezvous.bind(UnixDomainSocketAddress.of(dir.resolve("sock")));
        SocketChannel a = SocketChannel.open(rendezvous.getLocalAddress());
        SocketChannel b = rendezvous.accept();
        control = new SocketChannel[] {a, b};
    }

    @AfterEach
    void tearDown() throws IOException {
        for (SocketChannel c : control) c.close();
        rendezvous.close();
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) Files.deleteIfExists(f);
        }
        Files.deleteIfExists(dir);
    }

    /** Client and server ends of one connection, on two mappings of {@code file}. */
    private RingConnection[] connect(Path file) throws IOException {
        byte[] secret = ShmDirectory.randomBytes(Segment.SECRET_SIZE);
        Segment serverSeg = Segment.create(file, RING, RING, secret);
        Segment clientSeg = Segment.map(file, RING, RING, secret);
        ShmMedium server = new ShmMedium(1, serverSeg, true, control[1], Tracer.OFF, null, true);
        ShmMedium client = new ShmMedium(1, clientSeg, false, control[0], Tracer.OFF, null, true);
        return new RingConnection[] {
            new RingConnection(1, "shm", client, new TestHooks(), 100),
            new RingConnection(1, "shm", server, new TestHooks(), 100)
        };
    }

    @Test
    void theRingsAreFreedWhenTheSecondEndClosesAndNotBefore() throws Exception {
        Path file = dir.resolve("seg");
        RingConnection[] ends = connect(file);
        RingConnection client = ends[0];
        RingConnection server = ends[1];
        byte[] sent = new byte[40_000];
        new Random(7).nextBytes(sent);
        client.outputStream().write(sent);
        assertTrue(allocated(file) >= SEGMENT, "created with every page allocated: " + allocated(file));

        // the client is done; its last bytes are still unread in the server's ring
        client.close();
        assertTrue(allocated(file) >= SEGMENT, "one end still open: nothing freed, " + allocated(file) + " bytes allocated");
        assertArrayEquals(sent, readAll(server.inputStream()), "every byte the client wrote before closing");

        server.close();
        long after = allocated(file);
        assertTrue(after <= Segment.HEADER_SIZE, "both ends closed: the rings freed, " + after + " bytes still allocated of "
                + SEGMENT);
    }

    @Test
    void aReadBlockedAtTheCloseEndsAndTheRingsGoWhenTheOtherEndClosesToo() throws Exception {
        Path file = dir.resolve("seg");
        RingConnection[] ends = connect(file);
        RingConnection client = ends[0];
        RingConnection server = ends[1];
        CompletableFuture<Object> result = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                result.complete(server.inputStream().read(new byte[16])); // nothing comes: blocks until the close
            } catch (IOException e) {
                result.complete(e);
            }
        }, "blocked-reader");
        reader.start();
        // the close is made while the read is in progress (its frame on the reader's stack)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!inRead(reader)) {
            assertTrue(System.nanoTime() < deadline, "the reader never entered read()");
            Thread.onSpinWait();
        }
        server.close(); // waits for the read to leave (it is woken) before it says it is done with the rings
        Object r = result.get(10, TimeUnit.SECONDS);
        assertTrue(r instanceof SocketException, "the blocked read fails with the close: " + r);
        assertThrows(SocketException.class, () -> server.inputStream().read(new byte[1]), "a later read fails first");
        assertTrue(allocated(file) >= SEGMENT, "the client is still open: nothing freed, " + allocated(file));
        client.close();
        assertTrue(allocated(file) <= Segment.HEADER_SIZE, "both ends closed: freed, " + allocated(file) + " bytes left");
    }

    @Test
    void aSecondConnectionIsUnaffectedByTheFirstOnesRelease() throws Exception {
        RingConnection[] first = connect(dir.resolve("seg1"));
        RingConnection[] second = connect(dir.resolve("seg2"));
        first[0].close();
        first[1].close();
        byte[] msg = "after the first connection's release".getBytes(StandardCharsets.US_ASCII);
        second[0].outputStream().write(msg);
        byte[] got = new byte[msg.length];
        int n = 0;
        while (n < got.length) n += second[1].inputStream().read(got, n, got.length - n);
        assertArrayEquals(msg, got);
        assertTrue(allocated(dir.resolve("seg1")) <= Segment.HEADER_SIZE);
        assertTrue(allocated(dir.resolve("seg2")) >= SEGMENT);
        second[0].close();
        second[1].close();
    }

    private static boolean inRead(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals("io.sora.transport.RingInputStream") && e.getMethodName().equals("read")) return true;
        }
        return false;
    }

    private static byte[] readAll(InputStream in) throws IOException {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        int n;
        while ((n = in.read(buf)) >= 0) all.write(buf, 0, n);
        return all.toByteArray();
    }

    /** Bytes the file system holds for {@code file} ({@code stat}: allocated blocks times their size). */
    private static long allocated(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "--format=%b %B", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "stat did not finish");
        assertEquals(0, p.exitValue(), () -> "stat failed: " + out);
        String[] f = out.split(" ");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }
}
