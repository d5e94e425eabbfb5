package io.sora.transport;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.SocketException;

/**
 * Interrupt semantics as the JDK's own sockets have them: a platform thread blocked in a socket read
 * or write ignores {@link Thread#interrupt()} (the interrupt status stays set), while on JDK 21+ a
 * <em>virtual</em> thread's interrupt closes the socket and the call fails with
 * {@code SocketException("Closed by interrupt")}. The code is compiled for Java 17, so
 * {@code Thread.isVirtual()} is looked up once at run time.
 */
public final class VirtualThreads {
    private static final MethodHandle IS_VIRTUAL = lookup();

    private VirtualThreads() {
    }

    private static MethodHandle lookup() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // JDK 17-20: no virtual threads
        }
    }

    /** Whether {@code t} is a virtual thread (always false before JDK 21). */
    public static boolean isVirtual(Thread t) {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            return false;
        }
    }

    /** Closes the socket of an interrupted virtual thread's call, which fails with {@link #closedByInterrupt()} anyway. */
    static void closeSocket(SocketHooks hooks) {
        try {
            hooks.closeSocket();
        } catch (java.io.IOException e) {
            // the call already fails with "Closed by interrupt"
        }
    }

    /** The exception a virtual thread's interrupted socket call ends with (the caller closes the socket). */
    static SocketException closedByInterrupt() {
        return new SocketException("Closed by interrupt");
    }
}
