package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The agent's own cleaner: runs each action once, for a dropped socket too, and its thread ends at detach. */
class SocketCleanerTest {
    /** Cleaner threads alive now; other tests' cleaners (one per PathRecorder) may run in this JVM too. */
    private static java.util.Set<Thread> cleanerThreads() {
        java.util.Set<Thread> out = new java.util.HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("sora-cleaner") && t.isAlive()) out.add(t);
        }
        return out;
    }

    /** The one cleaner thread alive now that was not in {@code before}, or null. */
    private static Thread cleanerThreadSince(java.util.Set<Thread> before) {
        java.util.Set<Thread> now = cleanerThreads();
        now.removeAll(before);
        assertTrue(now.size() <= 1, "one cleaner, one thread: " + now);
        return now.isEmpty() ? null : now.iterator().next();
    }

    @Test
    void actionsRunOnceForClosedAndDroppedSocketsAndTheThreadEndsAtClose() throws Exception {
        java.util.Set<Thread> others = cleanerThreads();
        SocketCleaner cleaner = new SocketCleaner();
        AtomicInteger explicit = new AtomicInteger();
        Socket kept = new Socket();
        SocketCleaner.Cleanable c = cleaner.register(kept, explicit::incrementAndGet);
        c.clean();
        c.clean();
        assertEquals(1, explicit.get(), "an explicit clean runs the action once");

        CountDownLatch dropped = new CountDownLatch(1);
        cleaner.register(new Socket(), dropped::countDown);
        for (int i = 0; i < 100 && dropped.getCount() > 0; i++) {
            System.gc();
            dropped.await(100, TimeUnit.MILLISECONDS);
        }
        assertEquals(0, dropped.getCount(), "a socket dropped unclosed gets its action");

        Thread t = cleanerThreadSince(others);
        assertTrue(t != null && t.isAlive(), "the cleaner's thread runs");
        AtomicInteger afterClose = new AtomicInteger();
        SocketCleaner.Cleanable open = cleaner.register(kept, afterClose::incrementAndGet);
        cleaner.close();
        assertFalse(t.isAlive(), "close ended the thread");
        open.clean();
        assertEquals(1, afterClose.get(), "an explicit clean still runs after close");
        cleaner.register(new Socket(), () -> { });
        assertTrue(cleanerThreadSince(others) == null, "no thread starts after close");
        java.lang.ref.Reference.reachabilityFence(kept);
    }
}
