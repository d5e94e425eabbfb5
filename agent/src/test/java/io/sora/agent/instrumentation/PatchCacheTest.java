package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Patched JDK class files kept between JVMs: found again for the same class file only. */
class PatchCacheTest {
    @TempDir
    Path tmp;

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aStoredPatchIsReadBackForTheSameClassFileOnly() throws Exception {
        PatchCache cache = new PatchCache(tmp.resolve("patches"));
        byte[] original = b("the JDK's class file");
        assertNull(cache.entry("socket", "java/net/Socket", original).read(), "nothing kept yet");
        cache.entry("socket", "java/net/Socket", original).store(b("patched"));
        assertArrayEquals(b("patched"), cache.entry("socket", "java/net/Socket", original).read());
        assertNull(cache.entry("socket", "java/net/Socket", b("another JDK's class file")).read());
        assertNull(cache.entry("channel", "java/net/Socket", original).read(), "another patch");
        assertNull(cache.entry("socket", "java/net/ServerSocket", original).read(), "another class");
        try (var files = Files.list(tmp.resolve("patches"))) {
            assertArrayEquals(new Object[]{"socket-java.net.Socket-" + PatchCache.key(original) + ".class"},
                    files.map(p -> p.getFileName().toString()).toArray(), "one entry, no temporary file left");
        }
    }

    @Test
    void aClassThatCouldNotBePatchedIsNotKept() throws Exception {
        PatchCache cache = new PatchCache(tmp.resolve("patches"));
        cache.entry("socket", "java/net/Socket", b("x")).store(null);
        assertNull(cache.entry("socket", "java/net/Socket", b("x")).read());
    }

    @Test
    void theKeyTellsClassFilesOfOneLengthApart() {
        assertNotEquals(PatchCache.key(b("abcd")), PatchCache.key(b("abce")));
        assertNotEquals(PatchCache.key(b("abcd")), PatchCache.key(b("bacd")));
    }

    @Test
    void withoutTheAgentsOwnLoaderThereIsNoCache() {
        assertSame(PatchCache.NONE, PatchCache.of(PatchCacheTest.class), "a test's loader is not the agent's");
        byte[] original = b("y");
        PatchCache.NONE.entry("socket", "java/net/Socket", original).store(b("patched"));
        assertNull(PatchCache.NONE.entry("socket", "java/net/Socket", original).read());
    }
}
