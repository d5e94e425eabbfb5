package io.sora.examples.bench;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The benchmark's little protocol over one socket. The client sends a 32-byte command
 * ({@code int op, int size, long count, long arg, long 0}), which the server echoes as its go-ahead once
 * it has taken its starting CPU reading; the server then does what the op says and
 * then answers a 32-byte {@linkplain Receipt receipt} ({@code long count, long check, long cpuNanos,
 * long allocatedBytes}) holding what the command cost the server:
 * <ul>
 *   <li>{@link #PING}: {@code count} times, read a {@code size}-byte message and write it back;
 *       receipt check 0;</li>
 *   <li>{@link #STREAM}: read {@code count} chunks of {@code size} bytes, each stamped with its index
 *       in its first and (inverted) last 8 bytes; receipt check: CRC-32C of the final chunk;</li>
 *   <li>{@link #COPY}: read {@code count} bytes of a file in reads of up to {@code size} bytes, write
 *       them to the server's copy file, and compare their CRC-32C with {@code arg} (the server fails
 *       on a mismatch); receipt check: the CRC-32C it computed;</li>
 *   <li>{@link #END}: close (no receipt).</li>
 * </ul>
 * The stamps and checksums make a path that loses, reorders or zeroes data fail instead of look fast.
 */
final class Wire {
    static final int END = 0;
    static final int PING = 1;
    static final int STREAM = 2;
    static final int COPY = 3;
    static final int HEADER = 32;
    /** Smallest message: room for the 8-byte stamps. */
    static final int MIN_SIZE = 16;

    static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** What one command cost the server, as it reported it. A mutable holder, reused so reading it never allocates. */
    static final class Receipt {
        long count;
        long check;
        long cpuNanos;
        long allocatedBytes;
    }

    private Wire() {
    }

    /**
     * Sends a command and, unless it is {@link #END}, waits for the server's go-ahead (the command
     * echoed back), which the server sends once it has taken its starting CPU reading: the first
     * message of a command then never waits behind the server's bookkeeping.
     */
    static void command(InputStream in, OutputStream out, byte[] scratch, int op, int size, long count, long arg)
            throws IOException {
        sendCommand(out, scratch, op, size, count, arg);
        if (op != END) {
            readFully(in, scratch, HEADER);
            if ((int) INT.get(scratch, 0) != op || (long) LONG.get(scratch, 8) != count) {
                throw new IOException("the server's go-ahead does not echo command op=" + op + " count=" + count);
            }
        }
    }

    static void sendCommand(OutputStream out, byte[] scratch, int op, int size, long count, long arg) throws IOException {
        INT.set(scratch, 0, op);
        INT.set(scratch, 4, size);
        LONG.set(scratch, 8, count);
        LONG.set(scratch, 16, arg);
        LONG.set(scratch, 24, 0L);
        out.write(scratch, 0, HEADER);
        out.flush();
    }

    static void sendReceipt(OutputStream out, byte[] scratch, long count, long check, long cpuNanos, long allocated)
            throws IOException {
        LONG.set(scratch, 0, count);
        LONG.set(scratch, 8, check);
        LONG.set(scratch, 16, cpuNanos);
        LONG.set(scratch, 24, allocated);
        out.write(scratch, 0, HEADER);
        out.flush();
    }

    /** Reads the server's receipt for the last command into {@code r}. */
    static void readReceipt(InputStream in, byte[] scratch, Receipt r) throws IOException {
        readFully(in, scratch, HEADER);
        r.count = (long) LONG.get(scratch, 0);
        r.check = (long) LONG.get(scratch, 8);
        r.cpuNanos = (long) LONG.get(scratch, 16);
        r.allocatedBytes = (long) LONG.get(scratch, 24);
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
