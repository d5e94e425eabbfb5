package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.Announcement;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full tmpfs (a container's 64 MiB {@code /dev/shm}, say): a pairing that finds no room falls back
 * to TCP with the reason, and a paired connection never meets a page the tmpfs cannot give. Before
 * 2026-11-24 segments were sparse: every pairing succeeded, and the first write into a page the full
 * tmpfs could not give raised SIGBUS, thrown by the JVM as an {@code InternalError} into the writing
 * or reading thread (the connection's bytes lost). Needs a tmpfs of its own: mounted here, which takes
 * root; skipped (with the reason) where that is not allowed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmFullTmpfsTest {
    @TempDir
    Path tmp;

    /** What a test does in a tmpfs of its own. */
    private interface InTmpfs {
        void run(Path dir) throws Exception;
    }

    /** Mounts a tmpfs of {@code size} under the test's directory, runs {@code body} in it, unmounts it. */
    private void inTmpfs(String name, String size, InTmpfs body) throws Exception {
        Path dir = Files.createDirectory(tmp.resolve(name));
        String mounted = run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", dir.toString());
        Assumptions.assumeTrue(mounted.isEmpty(), "cannot mount a tmpfs here (needs root): " + mounted);
        try {
            body.run(dir);
        } finally {
            run("umount", "-l", dir.toString());
        }
    }

    @Test
    void aPairingThatFindsNoRoomFallsBackAndPairedConnectionsNeverFault() throws Exception {
        // room for two segments of 4 KiB + 2 x 64 KiB, not for six
        inTmpfs("tiny", "300k", ShmFullTmpfsTest::exercise);
    }

    /**
     * Closed connections give their rings back at once (both ends done: a hole punched in the segment),
     * not when the garbage collector unmaps them: here every closed connection stays referenced, so
     * nothing is unmapped, and twenty connections opened and closed one after another in a tmpfs with
     * room for four segments all pair. Before 2026-11-24 the fifth found no room and stayed on TCP (a
     * container's 64 MiB {@code /dev/shm}: about the 500th, until a collection).
     */
    @Test
    void closedConnectionsGiveTheirRingsBackBeforeTheyAreGarbage() throws Exception {
        inTmpfs("churn", "600k", dir -> {
            int ring = 65536;
            List<FastConnection[]> closed = new ArrayList<>(); // referenced: never unmapped during the test
            try (ShmFixture fx = new ShmFixture(dir, ring, ring, new ShmSettings(dir, 200))) {
                for (int i = 0; i < 20; i++) {
                    Announcement a = fx.transport.announce((InetSocketAddress) fx.serverSocket.getLocalSocketAddress(), fx.clientOptions());
                    Socket[] t = fx.tcp();
                    PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
                    PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
                    assertTrue(c instanceof PairingResult.Paired && s instanceof PairingResult.Paired,
                            "connection " + (i + 1) + " paired: client " + c + ", server " + s);
                    FastConnection[] p = {((PairingResult.Paired) c).connection(), ((PairingResult.Paired) s).connection()};
                    roundTrip(p[0], p[1], 2 * ring);
                    roundTrip(p[1], p[0], 2 * ring);
                    p[0].close();
                    p[1].close();
                    closed.add(p);
                    t[0].close();
                    t[1].close();
                }
            }
            assertEquals(20, closed.size());
        });
    }

    /**
     * Both ways of making a segment (the native library's {@code posix_fallocate}, and writing zeros where
     * it is not loaded) fail on a full tmpfs with the reason, leave no file behind, and succeed where the
     * segment fits.
     */
    @Test
    void bothWaysOfAllocatingASegmentFailCleanlyWhenItDoesNotFit() throws Exception {
        inTmpfs("small", "100k", tiny -> {
            List<Boolean> ways = io.sora.transport.NativeFiles.isAvailable() ? List.of(true, false) : List.of(false);
            System.out.println("ShmFullTmpfsTest: allocating natively " + (ways.size() == 2 ? "and" : "not; only") + " by writing zeros");
            for (boolean natively : ways) {
                Path big = tiny.resolve("seg-big-" + natively);
                IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                        () -> Segment.create(big, 65536, 65536, new byte[16], natively));
                assertTrue(e.getMessage().startsWith("no room for a 135168-byte segment in " + tiny + ": No space left on device"),
                        (natively ? "native: " : "java: ") + e.getMessage());
                assertTrue(Files.notExists(big), "the file is removed");
                Path small = tiny.resolve("seg-small-" + natively);
                Segment seg = Segment.create(small, 4096, 4096, new byte[16], natively);
                assertEquals(Segment.sizeFor(4096, 4096), Files.size(small));
                assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(small)));
                seg.buffer.put(Segment.HEADER_SIZE + 4096 + 4095, (byte) 1); // the last page: allocated, no fault
                Files.delete(small);
            }
        });
    }

    private static void exercise(Path tiny) throws Exception {
        int ring = 65536;
        try (ShmFixture fx = new ShmFixture(tiny, ring, ring, new ShmSettings(tiny, 200))) {
            List<FastConnection[]> paired = new ArrayList<>();
            List<String> fallbacks = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Announcement a = fx.transport.announce((InetSocketAddress) fx.serverSocket.getLocalSocketAddress(), fx.clientOptions());
                Socket[] t = fx.tcp();
                PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
                PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
                assertEquals(c.getClass(), s.getClass(), "both ends agree: client " + c + ", server " + s);
                if (c instanceof PairingResult.Paired pc) {
                    paired.add(new FastConnection[] {pc.connection(), ((PairingResult.Paired) s).connection()});
                } else {
                    fallbacks.add(((PairingResult.Fallback) s).reason());
                }
            }
            assertTrue(!paired.isEmpty(), "the first connections fit: " + fallbacks);
            assertTrue(!fallbacks.isEmpty(), "six segments cannot fit in 300 KiB, yet all paired");
            for (String why : fallbacks) {
                assertTrue(why.contains("no room for a 135168-byte segment in ") && why.contains("No space left on device"), why);
            }
            // every page of both rings of every paired connection, written and read back
            for (FastConnection[] p : paired) {
                roundTrip(p[0], p[1], 3 * ring);
                roundTrip(p[1], p[0], 3 * ring);
            }
            for (FastConnection[] p : paired) {
                p[0].close();
                p[1].close();
            }
        }
    }

    /** Writes {@code n} patterned bytes on one thread while reading them on this one; every byte checked. */
    private static void roundTrip(FastConnection from, FastConnection to, int n) throws Exception {
        byte[] sent = new byte[n];
        for (int i = 0; i < n; i++) sent[i] = (byte) (i * 7 + 3);
        Throwable[] failed = new Throwable[1];
        Thread writer = new Thread(() -> {
            try {
                OutputStream out = from.outputStream();
                out.write(sent);
                out.flush();
            } catch (Throwable e) {
                failed[0] = e;
            }
        });
        writer.start();
        InputStream in = to.inputStream();
        byte[] got = new byte[n];
        int off = 0;
        while (off < n) {
            int r = in.read(got, off, n - off);
            assertTrue(r > 0, "EOF after " + off + " bytes");
            off += r;
        }
        writer.join(30_000);
        if (failed[0] != null) throw new AssertionError("the writer failed", failed[0]);
        assertTrue(java.util.Arrays.equals(sent, got), "bytes differ");
    }

    /** Runs a command; returns its output when it failed, else "". */
    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return String.join(" ", cmd) + ": timed out";
        }
        return p.exitValue() == 0 ? "" : String.join(" ", cmd) + ": exit " + p.exitValue() + " " + out;
    }
}
