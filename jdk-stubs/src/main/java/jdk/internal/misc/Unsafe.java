package jdk.internal.misc;

/**
 * Compile-time signatures of the JDK's {@code jdk.internal.misc.Unsafe} methods that sora calls
 * ({@code io.sora.transport.MemoryAccess}), identical on JDK 17 and 25. Never on a run-time class path:
 * the JDK's own class runs. Only methods whose signatures are the same on both JDKs belong here
 * ({@code arrayBaseOffset}, for one, returns an int on 17 and a long on 25).
 */
public final class Unsafe {
    private Unsafe() {
    }

    private static UnsupportedOperationException stub() {
        return new UnsupportedOperationException("a compile-time stub: the JDK's jdk.internal.misc.Unsafe must run instead");
    }

    public Class<?> defineClass(String name, byte[] b, int off, int len, ClassLoader loader,
                                java.security.ProtectionDomain protectionDomain) {
        throw stub();
    }

    public static Unsafe getUnsafe() {
        throw stub();
    }

    public long objectFieldOffset(Class<?> c, String name) {
        throw stub();
    }

    public long getLong(Object o, long offset) {
        throw stub();
    }

    public long getLong(long address) {
        throw stub();
    }

    public int getInt(Object o, long offset) {
        throw stub();
    }

    public void putInt(Object o, long offset, int x) {
        throw stub();
    }

    public int getIntAcquire(Object o, long offset) {
        throw stub();
    }

    public void putIntRelease(Object o, long offset, int x) {
        throw stub();
    }

    public int getIntOpaque(Object o, long offset) {
        throw stub();
    }

    public void putIntOpaque(Object o, long offset, int x) {
        throw stub();
    }

    public long getLongAcquire(Object o, long offset) {
        throw stub();
    }

    public void putLongRelease(Object o, long offset, long x) {
        throw stub();
    }

    public int getAndBitwiseOrInt(Object o, long offset, int mask) {
        throw stub();
    }

    public int getAndBitwiseAndInt(Object o, long offset, int mask) {
        throw stub();
    }

    public int compareAndExchangeInt(Object o, long offset, int expected, int x) {
        throw stub();
    }

    public int getAndSetInt(Object o, long offset, int x) {
        throw stub();
    }

    public int getAndAddInt(Object o, long offset, int delta) {
        throw stub();
    }

    public void copyMemory(Object srcBase, long srcOffset, Object destBase, long destOffset, long bytes) {
        throw stub();
    }
}
