package io.sora.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Ordered and atomic ints and longs of a direct buffer shared with another process (a shm segment),
 * and copies between it and byte arrays, in the platform's byte order, with the memory-ordering modes of {@link VarHandle}'s access modes of
 * the same names. Through {@code jdk.internal.misc.Unsafe} where {@link MemoryAccess#FAST} (cheap from
 * a cold JVM's first call: see there), through a byte-buffer view {@link VarHandle} otherwise.
 *
 * <p>Every offset is checked against the buffer before use (an {@link IndexOutOfBoundsException},
 * never a write outside the mapping); alignment is the caller's (the segment's layout), as for the
 * VarHandle, which throws on a misaligned offset. The buffer must stay mapped while this is used (as
 * for any buffer view of a mapping).
 */
public final class DirectWords {
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buf;
    /** The address of the buffer's first byte when {@link #fast}, else 0. */
    private final long address;
    /** The last offset an int fits at, and a long. */
    private final int lastInt;
    private final int lastLong;
    /** {@link MemoryAccess#FAST}, or what a test says. */
    private final boolean fast;

    /** @param buf a direct buffer (its whole capacity is addressed, from index 0) */
    public DirectWords(ByteBuffer buf) {
        this(buf, MemoryAccess.FAST);
    }

    /** @param fast whether to use {@code Unsafe} (tests compare both ways; true only where {@link MemoryAccess#FAST}) */
    DirectWords(ByteBuffer buf, boolean fast) {
        if (!buf.isDirect()) throw new IllegalArgumentException("not a direct buffer: " + buf);
        if (fast && !MemoryAccess.FAST) throw new IllegalStateException("jdk.internal.misc is not exported to " + DirectWords.class.getModule());
        this.buf = buf;
        this.fast = fast;
        this.address = fast ? MemoryAccess.address(buf) : 0;
        this.lastInt = buf.capacity() - Integer.BYTES;
        this.lastLong = buf.capacity() - Long.BYTES;
    }

    /** The buffer these words are in. */
    public ByteBuffer buffer() {
        return buf;
    }

    private long intAt(int off) {
        if (off < 0 || off > lastInt) throw outside(off, Integer.BYTES);
        return address + off;
    }

    private long longAt(int off) {
        if (off < 0 || off > lastLong) throw outside(off, Long.BYTES);
        return address + off;
    }

    private IndexOutOfBoundsException outside(int off, int size) {
        return new IndexOutOfBoundsException("offset " + off + " (" + size + " bytes) outside a buffer of " + buf.capacity() + " bytes");
    }

    public int getInt(int off) {
        return fast ? MemoryAccess.Internal.U.getInt(null, intAt(off)) : (int) INTS.get(buf, off);
    }

    public void setInt(int off, int value) {
        if (fast) MemoryAccess.Internal.U.putInt(null, intAt(off), value);
        else INTS.set(buf, off, value);
    }

    public int getIntAcquire(int off) {
        return fast ? MemoryAccess.Internal.U.getIntAcquire(null, intAt(off)) : (int) INTS.getAcquire(buf, off);
    }

    public void setIntRelease(int off, int value) {
        if (fast) MemoryAccess.Internal.U.putIntRelease(null, intAt(off), value);
        else INTS.setRelease(buf, off, value);
    }

    public int getIntOpaque(int off) {
        return fast ? MemoryAccess.Internal.U.getIntOpaque(null, intAt(off)) : (int) INTS.getOpaque(buf, off);
    }

    public void setIntOpaque(int off, int value) {
        if (fast) MemoryAccess.Internal.U.putIntOpaque(null, intAt(off), value);
        else INTS.setOpaque(buf, off, value);
    }

    /** Atomically ORs {@code bits} in (volatile semantics); returns the value before. */
    public int getAndBitwiseOrInt(int off, int bits) {
        return fast ? MemoryAccess.Internal.U.getAndBitwiseOrInt(null, intAt(off), bits) : (int) INTS.getAndBitwiseOr(buf, off, bits);
    }

    /** Compare-and-set with volatile semantics; returns the value found (equal to {@code expected} if it was set). */
    public int compareAndExchangeInt(int off, int expected, int value) {
        return fast ? MemoryAccess.Internal.U.compareAndExchangeInt(null, intAt(off), expected, value)
                : (int) INTS.compareAndExchange(buf, off, expected, value);
    }

    /** Atomically ANDs {@code bits} in (volatile semantics); returns the value before. */
    public int getAndBitwiseAndInt(int off, int bits) {
        return fast ? MemoryAccess.Internal.U.getAndBitwiseAndInt(null, intAt(off), bits) : (int) INTS.getAndBitwiseAnd(buf, off, bits);
    }

    /** Atomic swap with volatile semantics (a full fence); returns the value before. */
    public int getAndSetInt(int off, int value) {
        return fast ? MemoryAccess.Internal.U.getAndSetInt(null, intAt(off), value) : (int) INTS.getAndSet(buf, off, value);
    }

    /** Atomic add with volatile semantics; returns the value before. */
    public int getAndAddInt(int off, int delta) {
        return fast ? MemoryAccess.Internal.U.getAndAddInt(null, intAt(off), delta) : (int) INTS.getAndAdd(buf, off, delta);
    }

    /**
     * Copies {@code len} bytes of {@code src} from {@code srcOff} to this buffer at {@code at} (plain
     * stores: the caller publishes them with a release store).
     */
    public void copyFrom(byte[] src, int srcOff, int at, int len) {
        java.util.Objects.checkFromIndexSize(srcOff, len, src.length);
        java.util.Objects.checkFromIndexSize(at, len, buf.capacity());
        if (fast) copy(src, MemoryAccess.Internal.BYTE_BASE + srcOff, null, address + at, len);
        else buf.put(at, src, srcOff, len);
    }

    /** Copies {@code len} bytes of this buffer at {@code at} into {@code dst} from {@code dstOff}. */
    public void copyTo(int at, byte[] dst, int dstOff, int len) {
        java.util.Objects.checkFromIndexSize(dstOff, len, dst.length);
        java.util.Objects.checkFromIndexSize(at, len, buf.capacity());
        if (fast) copy(null, address + at, dst, MemoryAccess.Internal.BYTE_BASE + dstOff, len);
        else buf.get(at, dst, dstOff, len);
    }

    /** Copies in slices of at most 1 MiB, as the JDK's buffers do, so that a safepoint is never held off long. */
    private static void copy(Object srcBase, long srcOffset, Object dstBase, long dstOffset, long len) {
        while (len > 0) {
            long n = Math.min(len, COPY_SLICE);
            MemoryAccess.Internal.U.copyMemory(srcBase, srcOffset, dstBase, dstOffset, n);
            srcOffset += n;
            dstOffset += n;
            len -= n;
        }
    }

    private static final long COPY_SLICE = 1L << 20;

    public long getLongAcquire(int off) {
        return fast ? MemoryAccess.Internal.U.getLongAcquire(null, longAt(off)) : (long) LONGS.getAcquire(buf, off);
    }

    public void setLongRelease(int off, long value) {
        if (fast) MemoryAccess.Internal.U.putLongRelease(null, longAt(off), value);
        else LONGS.setRelease(buf, off, value);
    }
}
