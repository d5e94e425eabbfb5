package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NativeLibraryTest {

    @Test
    void bundledLibraryIsOnTheClassPathUnderItsResourceName() throws IOException {
        try (InputStream in = NativeLibrary.class.getClassLoader().getResourceAsStream(NativeLibrary.RESOURCE)) {
            assertTrue(in != null, "missing resource " + NativeLibrary.RESOURCE);
            byte[] magic = in.readNBytes(4);
            assertArrayEquals(new byte[] {0x7f, 'E', 'L', 'F'}, magic, "not an ELF file");
        }
    }

    @Test
    void extractWritesTheLibraryOnceAndReturnsTheSamePath() throws IOException {
        Path first = NativeLibrary.extract();
        Path second = NativeLibrary.extract();
        assertEquals(first, second);
        assertEquals("libdisni.so", first.getFileName().toString());
        assertTrue(first.isAbsolute(), first::toString);
        try (InputStream in = NativeLibrary.class.getClassLoader().getResourceAsStream(NativeLibrary.RESOURCE)) {
            assertArrayEquals(in.readAllBytes(), Files.readAllBytes(first), "extracted copy differs from the resource");
        }
    }
}
