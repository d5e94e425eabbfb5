package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * {@link DirectWords} both ways (Unsafe and VarHandles): every access reads and writes the bytes a
 * plain buffer access in native order sees, the atomics return what was there, and an offset outside
 * the buffer throws instead of touching memory.
 */
class DirectWordsTest {
    @Test
    void theInternalUnsafeIsWhatTheseTestsRun() {
        // surefire exports jdk.internal.misc as the agent does (pom.xml); without it the fast way is untested
        assertTrue(MemoryAccess.FAST, "jdk.internal.misc.Unsafe not usable: the test JVM lacks the export");
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void intsAndLongsLandWhereABufferReadsThem(boolean fast) {
        ByteBuffer buf = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
        DirectWords w = new DirectWords(buf, fast);

        w.setInt(0, 0x11223344);
        assertEquals(0x11223344, buf.getInt(0));
        w.setIntRelease(4, -7);
        assertEquals(-7, buf.getInt(4));
        w.setIntOpaque(8, 99);
        assertEquals(99, buf.getInt(8));
        w.setLongRelease(16, 0x0102030405060708L);
        assertEquals(0x0102030405060708L, buf.getLong(16));

        buf.putInt(24, 5);
        assertEquals(5, w.getInt(24));
        assertEquals(5, w.getIntAcquire(24));
        assertEquals(5, w.getIntOpaque(24));
        buf.putLong(32, Long.MIN_VALUE + 3);
        assertEquals(Long.MIN_VALUE + 3, w.getLongAcquire(32));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void atomicsReturnWhatWasThereAndLeaveTheirResult(boolean fast) {
        ByteBuffer buf = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
        DirectWords w = new DirectWords(buf, fast);
        buf.putInt(12, 0b0101);

        assertEquals(0b0101, w.getAndBitwiseOrInt(12, 0b1010));
        assertEquals(0b1111, buf.getInt(12));

        assertEquals(0b1111, w.compareAndExchangeInt(12, 0b1111, 3), "set: the value found is the expected one");
        assertEquals(3, buf.getInt(12));
        assertEquals(3, w.compareAndExchangeInt(12, 4, 8), "not set: the value found");
        assertEquals(3, buf.getInt(12));

        assertEquals(3, w.getAndSetInt(12, 40));
        assertEquals(40, buf.getInt(12));
        assertEquals(40, w.getAndAddInt(12, 2));
        assertEquals(42, buf.getInt(12));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void anOffsetOutsideTheBufferThrowsAndWritesNothing(boolean fast) {
        ByteBuffer whole = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
        // a 16-byte slice: what lies beyond it in the same memory must stay untouched
        ByteBuffer slice = whole.slice(16, 16).order(ByteOrder.nativeOrder());
        DirectWords w = new DirectWords(slice, fast);
        w.setInt(12, 1); // the last int that fits
        w.setLongRelease(8, 2); // the last long that fits
        assertThrows(IndexOutOfBoundsException.class, () -> w.setInt(13, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.setInt(-4, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.setLongRelease(9, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.getAndAddInt(16, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.getLongAcquire(Integer.MIN_VALUE));
        for (int i = 0; i < 16; i++) assertEquals(0, whole.get(i), "before the slice, byte " + i);
        for (int i = 32; i < 64; i++) assertEquals(0, whole.get(i), "after the slice, byte " + i);
        assertEquals(2L, slice.getLong(8));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void copiesMoveExactlyTheBytesAskedForAndCheckBothSides(boolean fast) {
        ByteBuffer buf = ByteBuffer.allocateDirect(64);
        DirectWords w = new DirectWords(buf, fast);
        byte[] src = new byte[40];
        for (int i = 0; i < src.length; i++) src[i] = (byte) (i + 1);

        w.copyFrom(src, 5, 10, 30);
        for (int i = 0; i < 64; i++) assertEquals(i >= 10 && i < 40 ? (byte) (i - 10 + 6) : 0, buf.get(i), "byte " + i);

        byte[] dst = new byte[40];
        w.copyTo(12, dst, 3, 20);
        for (int i = 0; i < 40; i++) assertEquals(i >= 3 && i < 23 ? (byte) (i - 3 + 8) : 0, dst[i], "dst byte " + i);

        assertThrows(IndexOutOfBoundsException.class, () -> w.copyFrom(src, 0, 60, 5), "past the buffer");
        assertThrows(IndexOutOfBoundsException.class, () -> w.copyFrom(src, 30, 0, 11), "past the array");
        assertThrows(IndexOutOfBoundsException.class, () -> w.copyTo(-1, dst, 0, 4));
        assertThrows(IndexOutOfBoundsException.class, () -> w.copyTo(0, dst, 38, 3));
        assertEquals(0, buf.get(60), "a refused copy wrote nothing");
    }

    @Test
    void aHeapBufferIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new DirectWords(ByteBuffer.allocate(16)));
    }
}
