package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link NativeFiles#mapShared}: the shm segments' one-call create-and-map and map. */
class NativeFilesTest {
    @TempDir
    Path dir;

    @BeforeEach
    void loaded() {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
    }

    @Test
    void createdOwnerOnlyAllocatedAndSharedWithASecondMapping() throws IOException {
        Path f = dir.resolve("seg");
        ByteBuffer a = NativeFiles.mapShared(f, 3 * 4096, true);
        assertEquals(3 * 4096, a.capacity());
        assertTrue(a.isDirect());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertEquals(3 * 4096, Files.size(f));
        // every page allocated at creation (posix_fallocate), not at first touch
        long blocks = blocksOf(f);
        assertTrue(blocks * 512 >= 3 * 4096, "pages not allocated: " + blocks + " blocks");
        ByteBuffer b = NativeFiles.mapShared(f, 3 * 4096, false);
        a.putLong(4096 + 8, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, b.getLong(4096 + 8), "the two mappings do not share the file");
        byte[] text = "both ways".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        b.put(2 * 4096, text);
        byte[] back = new byte[text.length];
        a.get(2 * 4096, back);
        assertArrayEquals(text, back);
    }

    private static long blocksOf(Path f) throws IOException {
        // st_blocks is not among Java's attributes: ask stat(1)
        Process p = new ProcessBuilder("stat", "-c", "%b", f.toString()).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes()).trim();
            assertTrue(p.waitFor(10, TimeUnit.SECONDS), "stat did not end");
            return Long.parseLong(out);
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
    }

    @Test
    void refusalsNameTheFileAndLeaveWhatWasThere() throws IOException {
        Path f = dir.resolve("seg");
        NativeFiles.mapShared(f, 8192, true);
        // create over an existing file: refused, and the file is not removed
        IOException exists = assertThrows(IOException.class, () -> NativeFiles.mapShared(f, 8192, true));
        assertTrue(exists.getMessage().contains(f.toString()) && exists.getMessage().contains("File exists"), exists.getMessage());
        assertTrue(Files.exists(f));
        // another size than the offer's
        IOException size = assertThrows(IOException.class, () -> NativeFiles.mapShared(f, 4096, false));
        assertEquals(f + " has 8192 bytes, expected 4096", size.getMessage());
        // a planted symbolic link is not followed
        Path link = dir.resolve("link");
        Files.createSymbolicLink(link, f);
        IOException loop = assertThrows(IOException.class, () -> NativeFiles.mapShared(link, 8192, false));
        assertTrue(loop.getMessage().startsWith(link.toString()) && loop.getMessage().contains("symbolic links"), loop.getMessage());
        // a planted FIFO neither blocks the open nor gets mapped
        Path fifo = dir.resolve("fifo");
        try {
            Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
            assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo failed");
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
        IOException notFile = assertThrows(IOException.class, () -> NativeFiles.mapShared(fifo, 8192, false));
        assertEquals(fifo + " is not a regular file", notFile.getMessage());
        // missing
        IOException missing = assertThrows(IOException.class, () -> NativeFiles.mapShared(dir.resolve("none"), 8192, false));
        assertTrue(missing.getMessage().contains("No such file"), missing.getMessage());
    }

    @Test
    void aRenameKeepsTheMappingAndSaysWhyItFailed() throws IOException {
        Path from = dir.resolve("spare");
        Path to = dir.resolve("seg");
        ByteBuffer buf = NativeFiles.mapShared(from, 4096, true);
        buf.putInt(0, 42);
        NativeFiles.rename(from, to);
        assertTrue(!Files.exists(from) && Files.exists(to));
        assertEquals(42, NativeFiles.mapShared(to, 4096, false).getInt(0), "not the same file under its new name");
        IOException gone = assertThrows(IOException.class, () -> NativeFiles.rename(from, dir.resolve("other")));
        assertEquals(from + " -> " + dir.resolve("other") + ": No such file or directory", gone.getMessage());
    }

    @Test
    void theMappingGoesWhenItsBufferIsGarbage() throws IOException {
        Path f = dir.resolve("seg-gc");
        ByteBuffer buf = NativeFiles.mapShared(f, 4096, true);
        ByteBuffer view = buf.slice(100, 200); // a view keeps the mapping, as the JDK's do
        buf = null;
        assertTrue(mapped(f), "not mapped");
        WeakReference<ByteBuffer> gone = new WeakReference<>(view);
        view.put(0, (byte) 1);
        view = null;
        // bounded: the collector finds the buffer unreachable and enqueues it; unmapCollected unmaps it
        for (int i = 0; i < 500 && (gone.get() != null || mapped(f)); i++) {
            System.gc();
            NativeFiles.unmapCollected();
            try {
                Thread.sleep(10); // the reference handler enqueues asynchronously; this polls a condition, bounded
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }
        assertTrue(gone.get() == null, "the buffer was never collected");
        assertTrue(!mapped(f), "still mapped after its buffer was collected");
    }

    private static boolean mapped(Path f) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().anyMatch(l -> l.endsWith(f.toString()));
    }
}
