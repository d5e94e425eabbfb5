package io.sora.agent;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractInterruptibleChannel;

/**
 * The interrupt semantics of a blocking channel operation, for a paired channel's reads and writes:
 * the JDK's own {@code AbstractInterruptibleChannel.begin()/end(boolean)} around the wait, so that an
 * interrupt closes the channel (which wakes the ring wait, through the close hook) and the call ends
 * with {@code ClosedByInterruptException}, and a close by another thread with
 * {@code AsynchronousCloseException}, exactly as on TCP. {@code java.nio.channels.spi} is opened to
 * the agent by the channel patch.
 */
final class Interruptible {
    private static final MethodHandle BEGIN;
    private static final MethodHandle END;

    static {
        MethodHandle b = null;
        MethodHandle e = null;
        try {
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(AbstractInterruptibleChannel.class, MethodHandles.lookup());
            b = l.findVirtual(AbstractInterruptibleChannel.class, "begin", MethodType.methodType(void.class))
                    .asType(MethodType.methodType(void.class, SocketChannel.class));
            e = l.findVirtual(AbstractInterruptibleChannel.class, "end", MethodType.methodType(void.class, boolean.class))
                    .asType(MethodType.methodType(void.class, SocketChannel.class, boolean.class));
        } catch (ReflectiveOperationException | RuntimeException ex) {
            // not reachable (the patch opens the package): an interrupt then does not end the wait
        }
        BEGIN = b;
        END = e;
    }

    private Interruptible() {
    }

    /** Whether begin/end are reachable here; channels are served without interrupts otherwise. */
    static boolean available() {
        return BEGIN != null && END != null;
    }

    static void begin(SocketChannel ch) {
        if (BEGIN == null) return;
        try {
            BEGIN.invokeExact(ch);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Throws ClosedByInterruptException or AsynchronousCloseException as the JDK's end does. */
    static void end(SocketChannel ch, boolean completed) throws AsynchronousCloseException {
        if (END == null) return;
        try {
            END.invokeExact(ch, completed);
        } catch (AsynchronousCloseException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
