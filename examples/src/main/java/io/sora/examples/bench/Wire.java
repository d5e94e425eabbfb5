package io.sora.examples.bench;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The benchmark's little protocol over one socket. The client sends a 16-byte command
 * ({@code int op, int size, long count}); the server answers as the op says:
 * <ul>
 *   <li>{@link #PING}: {@code count} times, read a {@code size}-byte message and write it back;</li>
 *   <li>{@link #STREAM}: read {@code count} chunks of {@code size} bytes, each stamped with its index
 *       in its first and (inverted) last 8 bytes, then answer 16 bytes: chunks verified and the
 *       CRC-32 of the final chunk;</li>
 *   <li>{@link #END}: close.</li>
 * </ul>
 * The stamps and checksum make a path that loses, reorders or zeroes data fail instead of look fast.
 */
final class Wire {
    static final int END = 0;
    static final int PING = 1;
    static final int STREAM = 2;
    static final int HEADER = 16;
    /** Smallest message: room for the 8-byte stamps. */
    static final int MIN_SIZE = 16;

    static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private Wire() {
    }

    static void sendHeader(OutputStream out, byte[] scratch, int op, int size, long count) throws IOException {
        INT.set(scratch, 0, op);
        INT.set(scratch, 4, size);
        LONG.set(scratch, 8, count);
        out.write(scratch, 0, HEADER);
        out.flush();
    }

    /** Fills {@code buf[0, len)} from {@code in}; EOF before that is an {@link EOFException}. */
    static void readFully(InputStream in, byte[] buf, int len) throws IOException {
        int off = 0;
        while (off < len) {
            int n = in.read(buf, off, len - off);
            if (n < 0) {
                throw new EOFException("peer closed after " + off + " of " + len + " bytes");
            }
            off += n;
        }
    }

    /** A deterministic, non-constant fill so that stale or zeroed buffers do not compare equal. */
    static void fill(byte[] buf) {
        for (int i = 0; i < buf.length; i++) {
            buf[i] = (byte) (i * 31 + 7);
        }
    }

    static void stamp(byte[] chunk, int size, long index) {
        LONG.set(chunk, 0, index);
        LONG.set(chunk, size - 8, ~index);
    }

    static boolean stamped(byte[] chunk, int size, long index) {
        return (long) LONG.get(chunk, 0) == index && (long) LONG.get(chunk, size - 8) == ~index;
    }
}
