package io.sora.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/** A close's idle action runs once, and only when no thread holds the stream's lock. */
class IdleActionTest {
    private final ReentrantLock lock = new ReentrantLock();
    private final IdleAction idle = new IdleAction();
    private final AtomicInteger runs = new AtomicInteger();

    @Test
    void withTheLockFreeItRunsAtOnceAndOnlyOnce() {
        idle.set(runs::incrementAndGet, lock);
        assertEquals(1, runs.get());
        idle.runIfIdle(lock);
        assertEquals(1, runs.get(), "claimed: never again");
    }

    @Test
    void whileAnotherThreadHoldsTheLockItWaitsForThatThreadToLeave() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            lock.lock();
            try {
                held.countDown();
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock.unlock();
                idle.runIfIdle(lock); // what a stream's unlock() does after a close
            }
        });
        reader.start();
        held.await(10, TimeUnit.SECONDS);
        idle.set(runs::incrementAndGet, lock);
        assertEquals(0, runs.get(), "a read is inside: not yet");
        release.countDown();
        reader.join(10_000);
        assertEquals(1, runs.get(), "run by the reader as it left");
    }

    @Test
    void aThreadInsideAnOuterFrameDoesNotRunItUntilItLeavesThatToo() {
        lock.lock(); // read() holding the lock around read(byte[], ...)
        lock.lock();
        idle.set(runs::incrementAndGet, lock);
        lock.unlock();
        idle.runIfIdle(lock);
        assertEquals(0, runs.get(), "still inside the outer frame");
        lock.unlock();
        idle.runIfIdle(lock);
        assertEquals(1, runs.get());
    }
}
