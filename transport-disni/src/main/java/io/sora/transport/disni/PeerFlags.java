package io.sora.transport.disni;

import io.sora.transport.RingMedium;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The peer's flags as this side knows them ({@link RingMedium#OUTPUT_SHUTDOWN},
 * {@link RingMedium#INPUT_SHUTDOWN}, {@link RingMedium#CLOSED} from its credit messages,
 * {@link RingMedium#DEAD} set here). Updated by several threads: the poll lock holder (a credit
 * message), the CM thread (DISCONNECTED), the writer and the credit path (a failed post), so every
 * update is atomic (as the shm medium's {@code getAndBitwiseOr} on its flags word): none is lost.
 */
final class PeerFlags {
    private static final VarHandle FLAGS;

    static {
        try {
            FLAGS = MethodHandles.lookup().findVarHandle(PeerFlags.class, "flags", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int flags;

    int get() {
        return flags;
    }

    /** ORs {@code f} in (atomically). */
    void or(int f) {
        FLAGS.getAndBitwiseOr(this, f);
    }

    /** Sets DEAD unless the peer closed or died already (atomically); true if this call set it. */
    boolean markDead() {
        for (;;) {
            int f = flags;
            if ((f & (RingMedium.CLOSED | RingMedium.DEAD)) != 0) return false;
            if (FLAGS.compareAndSet(this, f, f | RingMedium.DEAD)) return true;
        }
    }
}
