package io.sora.transport;

import java.nio.ByteBuffer;

/**
 * The ordered and atomic memory accesses of the data path and the pairing words, through the JDK's
 * internal {@code jdk.internal.misc.Unsafe} where the agent exported its package to this code, and
 * through {@link java.lang.invoke.VarHandle}s otherwise ({@link #FAST} tells which).
 *
 * <p>Why not VarHandles alone: compiled by C2 both are the same instructions, but a JVM runs sora's
 * code interpreted, then through C1, before C2 compiles it, and that is where a cold JVM's first
 * connections and messages run. There a VarHandle access goes through a chain of method handle
 * adapters (lambda forms): measured on this project's 2-CPU machine, JDK 17, three accesses of a direct
 * buffer (an acquire load, a release store, an atomic or) took 3.3 us interpreted against 0.34 us
 * through {@code Unsafe}, and 139 against 15 ns in a JVM's first tiered phase; each access mode also
 * costs about a millisecond to link the first time, and its adapters are classes the JIT compiles
 * again in every JVM. A shm round trip makes a few dozen such accesses, a pairing about as many.
 *
 * <p>Why not {@code sun.misc.Unsafe}: from JDK 24 its memory methods print a warning into the
 * application's output the first time they are called. The internal class has no such warning; its
 * package is exported by the agent with {@code Instrumentation.redefineModule} to the module of this
 * class alone (the agent's own class loader's, on JDK 22+ the named module {@code sora.transport.core}), never to the
 * application. Without that export (unit tests, a library use of these classes) everything still
 * works, through VarHandles. {@code -Dsora.memory.varHandles=true} chooses VarHandles anyway, to
 * compare.
 *
 * <p>Nothing here checks bounds: {@link DirectWords} checks every offset against its buffer before
 * it reaches the address.
 */
public final class MemoryAccess {
    /** Whether {@code jdk.internal.misc.Unsafe} is used (exported to this module, not turned off). */
    public static final boolean FAST = usable();

    private MemoryAccess() {
    }

    private static boolean usable() {
        if (Boolean.getBoolean("sora.memory.varHandles")) return false;
        try {
            if (!Object.class.getModule().isExported("jdk.internal.misc", MemoryAccess.class.getModule())) return false;
            return Internal.check();
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /** The field's offset for the long accessors below; -1 unless {@link #FAST}. */
    static long fieldOffset(Class<?> owner, String field) {
        return FAST ? Internal.U.objectFieldOffset(owner, field) : -1;
    }

    /** The address of a direct buffer's first byte; 0 unless {@link #FAST}. */
    static long address(ByteBuffer direct) {
        if (!direct.isDirect()) throw new IllegalArgumentException("not a direct buffer: " + direct);
        return FAST ? Internal.U.getLong(direct, Internal.ADDRESS) : 0;
    }

    /** Only when {@link #FAST}: an acquire load of a long field at {@link #fieldOffset}. */
    static long getLongAcquire(Object o, long offset) {
        return Internal.U.getLongAcquire(o, offset);
    }

    /** Only when {@link #FAST}: a release store of a long field at {@link #fieldOffset}. */
    static void putLongRelease(Object o, long offset, long value) {
        Internal.U.putLongRelease(o, offset, value);
    }

    /**
     * Every reference to the internal class, in a class of its own: it is loaded, linked and
     * initialised only when the package is exported to this module (else the access checks of its
     * first use would fail).
     */
    static final class Internal {
        static final jdk.internal.misc.Unsafe U = jdk.internal.misc.Unsafe.getUnsafe();
        static final long ADDRESS = U.objectFieldOffset(java.nio.Buffer.class, "address");
        /** Where a byte array's elements begin (an int field on JDK 17, a long on 25: read by reflection). */
        static final long BYTE_BASE = byteBase();

        private static long byteBase() {
            try {
                return ((Number) jdk.internal.misc.Unsafe.class.getField("ARRAY_BYTE_BASE_OFFSET").get(null)).longValue();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        private Internal() {
        }

        /** Reads a direct buffer's address both ways: true if they agree. */
        static boolean check() {
            ByteBuffer b = ByteBuffer.allocateDirect(16).order(java.nio.ByteOrder.nativeOrder());
            b.putLong(8, 0x0102030405060708L);
            byte[] a = {1, 2, 3};
            U.copyMemory(a, BYTE_BASE, null, U.getLong(b, ADDRESS) + 1, 3);
            return U.getLong(U.getLong(b, ADDRESS) + 8) == 0x0102030405060708L && b.get(1) == 1 && b.get(3) == 3;
        }
    }
}
