package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Patched JDK class files kept between JVMs: found again for the same class file only, and only intact. */
class PatchCacheTest {
    @TempDir
    Path tmp;

    /** A class file as far as the cache can tell: its magic, then anything. */
    static byte[] classFile(String s) {
        byte[] text = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] b = new byte[4 + text.length];
        b[0] = (byte) 0xCA;
        b[1] = (byte) 0xFE;
        b[2] = (byte) 0xBA;
        b[3] = (byte) 0xBE;
        System.arraycopy(text, 0, b, 4, text.length);
        return b;
    }

    private PatchCache cache() {
        return new PatchCache(tmp.resolve("patches").toFile());
    }

    private File[] entries() {
        File[] f = tmp.resolve("patches").toFile().listFiles();
        return f == null ? new File[0] : f;
    }

    @Test
    void aStoredPatchIsReadBackForTheSameClassFileOnly() {
        PatchCache cache = cache();
        byte[] original = classFile("the JDK's class file");
        assertNull(cache.entry("socket", "java/net/Socket", original, false).read(), "nothing kept yet");
        cache.entry("socket", "java/net/Socket", original, false).store(classFile("patched"));
        assertArrayEquals(classFile("patched"), cache.entry("socket", "java/net/Socket", original, false).read());
        assertNull(cache.entry("socket", "java/net/Socket", classFile("another JDK's class file"), false).read());
        assertNull(cache.entry("channel", "java/net/Socket", original, false).read(), "another patch");
        assertNull(cache.entry("socket", "java/net/ServerSocket", original, false).read(), "another class");
        File[] files = entries();
        assertEquals(1, files.length, "one entry, no temporary file left");
        assertEquals("socket-java.net.Socket-" + PatchCache.key(original) + ".class", files[0].getName());
    }

    @Test
    void aRetransformationIsNeitherServedNorKept() {
        PatchCache cache = cache();
        byte[] original = classFile("a class file the JVM reconstituted");
        cache.entry("channel", "sun/nio/ch/FileChannelImpl", original, true).store(classFile("patched"));
        assertEquals(0, entries().length, "nothing kept for a retransformation");
        cache.entry("channel", "sun/nio/ch/FileChannelImpl", original, false).store(classFile("patched"));
        assertNull(cache.entry("channel", "sun/nio/ch/FileChannelImpl", original, true).read());
    }

    @Test
    void aDamagedEntryIsRemovedAndTheClassPatchedAgain() throws Exception {
        PatchCache cache = cache();
        byte[] original = classFile("x");
        PatchCache.Entry e = cache.entry("socket", "java/net/Socket", original, false);
        e.store(classFile("patched"));
        File f = entries()[0];
        byte[] good = Files.readAllBytes(f.toPath());
        // truncated, emptied, one byte changed: each read as absent, and the file gone
        for (byte[] bad : new byte[][]{java.util.Arrays.copyOf(good, good.length - 3), new byte[0], flip(good, good.length - 1),
                flip(good, 20)}) {
            Files.write(f.toPath(), bad);
            assertNull(e.read());
            assertFalse(f.exists(), "a damaged entry is removed");
            e.store(classFile("patched"));
        }
        assertArrayEquals(classFile("patched"), e.read());
    }

    private static byte[] flip(byte[] b, int i) {
        byte[] c = b.clone();
        c[i] ^= 0x40;
        return c;
    }

    @Test
    void aClassThatCouldNotBePatchedIsNotKept() {
        PatchCache cache = cache();
        cache.entry("socket", "java/net/Socket", classFile("x"), false).store(null);
        assertEquals(0, entries().length);
    }

    @Test
    void theKeyTellsClassFilesOfOneLengthApartAndHasAFixedWidth() {
        assertNotEquals(PatchCache.key(classFile("abcd")), PatchCache.key(classFile("abce")));
        assertNotEquals(PatchCache.key(classFile("abcd")), PatchCache.key(classFile("bacd")));
        assertEquals(8 + 1 + 16, PatchCache.key(new byte[0]).length());
        assertEquals(8 + 1 + 16, PatchCache.key(classFile("abcd")).length());
    }

    @Test
    void withoutTheAgentsOwnLoaderThereIsNoCache() {
        assertSame(PatchCache.NONE, PatchCache.of(PatchCacheTest.class), "a test's loader is not the agent's");
        byte[] original = classFile("y");
        PatchCache.NONE.entry("socket", "java/net/Socket", original, false).store(classFile("patched"));
        assertNull(PatchCache.NONE.entry("socket", "java/net/Socket", original, false).read());
    }
}
