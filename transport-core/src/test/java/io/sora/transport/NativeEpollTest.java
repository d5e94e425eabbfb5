package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class NativeEpollTest {
    /**
     * A closed set is never used again, even once the kernel gave its descriptor numbers to another set
     * (the lowest free number first): a wait on it fails instead of taking the other set's events.
     * Before, it returned the other set's wake-up (found in review, 2026-11-29).
     */
    @Test
    void aClosedSetNeverWaitsOnDescriptorsReusedSince() throws IOException {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        NativeEpoll a = NativeEpoll.open();
        a.close();
        try (NativeEpoll b = NativeEpoll.open()) {
            b.wakeup();
            assertThrows(IOException.class, () -> a.await(new long[2], 0));
            assertEquals(-9, a.ctl(NativeEpoll.CTL_ADD, b.fd(), NativeEpoll.EPOLLIN, 1));
            assertEquals(1, b.await(new long[2], 0), "b's own wake-up");
        }
    }

    /** A close from another thread wakes a thread waiting in the set without a time limit, then closes it. */
    @Test
    void aCloseWakesAWaiterAndClosesAfterIt() throws Exception {
        assertTrue(Futex.isAvailable(), "libsora did not load: " + Futex.availability());
        NativeEpoll a = NativeEpoll.open();
        CompletableFuture<Integer> result = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                result.complete(a.await(new long[2], -1));
            } catch (IOException e) {
                result.completeExceptionally(e);
            }
        }, "epoll-waiter");
        waiter.start();
        awaitIn(waiter, "wait0");
        a.close();
        assertTrue(result.get(10, TimeUnit.SECONDS) >= 0, "the waiter left its wait");
        assertThrows(IOException.class, () -> a.await(new long[2], 0));
    }

    /** Until {@code t} runs {@code method} (a native wait shows as RUNNABLE: its stack says where it is). */
    private static void awaitIn(Thread t, String method) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (java.util.Arrays.stream(t.getStackTrace()).noneMatch(f -> f.getMethodName().equals(method))) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError(t.getName() + " never reached " + method);
            Thread.yield();
        }
    }
}
