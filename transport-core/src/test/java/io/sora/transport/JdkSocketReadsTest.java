package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Reading the JDK's class file for whether its socket reads count the lock's wait in SO_TIMEOUT. */
class JdkSocketReadsTest {
    /** Two methods of the same name and descriptor shape as the JDK's, one calling tryLock, one not. */
    static final class Calls {
        static long tryLock(Object lock, long t, java.util.concurrent.TimeUnit u) {
            return t;
        }

        int read(byte[] b, int off, int len) {
            return (int) tryLock(b, len, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    static final class DoesNotCall {
        static long tryLock(Object lock, long t, java.util.concurrent.TimeUnit u) {
            return t;
        }

        int read(byte[] b, int off, int len) {
            return off + len;
        }

        int other() {
            return (int) tryLock(this, 1, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    private static boolean calls(Class<?> c) throws Exception {
        try (InputStream in = c.getResourceAsStream(c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class")) {
            return JdkSocketReads.calls(new DataInputStream(in), "read", "([BII)I", "tryLock");
        }
    }

    @Test
    void aReadThatCallsTryLockIsToldFromOneThatDoesNot() throws Exception {
        assertTrue(calls(Calls.class));
        assertFalse(calls(DoesNotCall.class), "only the read method's code counts");
    }

    @Test
    void theRunningJdksReadsAreReadAsTheirSourceSays() {
        int feature = Runtime.version().feature();
        Assumptions.assumeTrue(feature == 17 || feature >= 25, "known for JDK 17 (lock) and 25 (tryLock) only");
        assertEquals(feature >= 25, JdkSocketReads.readCallsTryLock());
    }
}
