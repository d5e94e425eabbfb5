package io.sora.transport.shm.fuzz;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.net.ProtocolException;
import java.nio.ByteBuffer;

/**
 * Reaches the package-private decoder and encoder of {@code io.sora.transport.shm.Wire} (the fuzz
 * tests live in their own package, so that they stay apart from the transport's own tests).
 */
final class WireAccess {
    private static final MethodHandle TRY_DECODE;
    private static final MethodHandle ENCODE;

    static {
        try {
            Class<?> wire = Class.forName("io.sora.transport.shm.Wire");
            Class<?> message = Class.forName("io.sora.transport.shm.Wire$Message");
            Method decode = wire.getDeclaredMethod("tryDecode", ByteBuffer.class);
            Method encode = wire.getDeclaredMethod("encode", message);
            decode.setAccessible(true);
            encode.setAccessible(true);
            TRY_DECODE = MethodHandles.lookup().unreflect(decode);
            ENCODE = MethodHandles.lookup().unreflect(encode);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private WireAccess() {
    }

    /** {@code Wire.tryDecode(acc)}: a message, or null while incomplete; its only checked exception is ProtocolException. */
    static Object tryDecode(ByteBuffer acc) throws ProtocolException {
        try {
            return TRY_DECODE.invoke(acc);
        } catch (ProtocolException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("Wire.tryDecode threw an undeclared checked exception", t);
        }
    }

    /** {@code Wire.encode(message)}, as a byte array. */
    static byte[] encode(Object message) {
        try {
            ByteBuffer b = (ByteBuffer) ENCODE.invoke(message);
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
