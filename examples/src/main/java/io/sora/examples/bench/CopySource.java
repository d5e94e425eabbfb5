package io.sora.examples.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The file the copy phase sends: pseudo-random bytes (so no layer can compress or deduplicate it),
 * written once per run, with the CRC-32C the receiver must reproduce. Immutable once made.
 */
record CopySource(Path file, long bytes, long crc) {

    /** Writes {@code bytes} pseudo-random bytes to {@code file} and checksums them. */
    static CopySource create(Path file, long bytes) {
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        SplittableRandom random = new SplittableRandom(0x50_7A_BE_AC_11L);
        CRC32C crc = new CRC32C();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long left = bytes; left > 0; ) {
                buf.clear();
                while (buf.remaining() >= 8) {
                    buf.putLong(random.nextLong());
                }
                buf.flip();
                buf.limit((int) Math.min(buf.limit(), left));
                crc.update(buf.duplicate());
                left -= buf.remaining();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the copy source " + file, e);
        }
        return new CopySource(file, bytes, crc.getValue());
    }
}
