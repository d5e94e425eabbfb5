package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.RdmaCmEvent;
import io.sora.trace.Tracer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, RDMA defect 5: sora's {@code _getCmEvent} returns -2 on error and DiSNI's
 * {@code getCmEvent} turns that into null, as for a timeout; a loop that took every null for a
 * timeout spun hot on a persistent error. The fake source returns null at once, as the real one does
 * then. The loop must end after a bounded number of tries, release the event channel, and tell every
 * handler registered for a CM id (the server's {@link RdmaLink}, which fails its pairing behind any
 * COMMIT already polled, and the client's connecting attempt) and the CONNECT_REQUEST handler, each
 * with the reason.
 *
 * <p>Both loops sora runs (the client's {@code sora-rdma-cm} and each listener's) wait for events
 * with a bounded wait ({@link RdmaClient#LOOP_WAIT_MILLIS}, 500 ms): there an empty return long
 * before the wait is over is the error. A loop that waits forever ({@code -1}) takes every empty
 * return as one; that case stays covered for the {@link CmLoop.EventSource} contract.
 */
class CmLoopTest {
    /** Far more than the loop needs; only so that a regression fails instead of hanging. */
    private static final long BOUND_SECONDS = 20;
    /** A spinning loop calls the source millions of times in the bound; the fixed one a handful. */
    private static final int MAX_CALLS = 1000;

    private static final class FailingSource implements CmLoop.EventSource {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch closed = new CountDownLatch(1);

        @Override
        public RdmaCmEvent next(int timeoutMillis) {
            calls.incrementAndGet();
            return null; // what DiSNI returns for -2: no event, no exception, at once
        }

        @Override
        public void close() {
            closed.countDown();
        }
    }

    private static void persistentErrorEndsTheLoopAndTellsEveryHandler(int timeoutMillis) throws Exception {
        FailingSource source = new FailingSource();
        RecordingHandler requests = new RecordingHandler();
        CmLoop loop = new CmLoop("test-cm", Tracer.OFF, requests, timeoutMillis, null, source);
        RecordingHandler connection = new RecordingHandler();
        loop.register(new Object(), connection);
        boolean ended = loop.awaitEnd(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        assertTrue(ended, "the loop ended (source called " + source.calls.get() + " times)");
        assertTrue(source.calls.get() <= MAX_CALLS, "bounded tries, not a hot spin: " + source.calls.get());
        assertTrue(connection.failed.await(BOUND_SECONDS, TimeUnit.SECONDS), "the registered handler was told");
        assertTrue(connection.reason.get().contains("CM event"), connection.reason.get());
        assertTrue(requests.failed.await(BOUND_SECONDS, TimeUnit.SECONDS), "the CONNECT_REQUEST handler was told");
        assertEquals(connection.reason.get(), requests.reason.get());
        assertEquals(loop.failure(), connection.reason.get());
        assertTrue(source.closed.getCount() == 0, "the event channel was released");
    }

    /**
     * An event whose CM id was released by another thread after the native library acknowledged it names
     * no id (DiSNI finds none in its map): the loop ignores it and goes on. A lookup of the null id threw,
     * and the loop ended, failing every connection it served (found in review, 2026-11-28).
     */
    @Test
    void anEventOfAReleasedIdIsIgnored() throws Exception {
        CountDownLatch served = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        CmLoop.EventSource source = new CmLoop.EventSource() {
            @Override
            public RdmaCmEvent next(int timeoutMillis) throws java.io.IOException {
                int n = calls.incrementAndGet();
                if (n == 1) return new RdmaCmEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal(), null, null);
                served.countDown(); // asked again: the loop lived on
                java.util.concurrent.locks.LockSupport.parkNanos(timeoutMillis * 1_000_000L); // a wait that times out
                return null;
            }

            @Override
            public void close() {
            }
        };
        CmLoop loop = new CmLoop("test-cm", Tracer.OFF, null, 50, null, source);
        RecordingHandler connection = new RecordingHandler();
        loop.register(new Object(), connection);
        assertTrue(served.await(BOUND_SECONDS, TimeUnit.SECONDS), "the loop asked for the next event");
        loop.closeWhenIdle();
        assertEquals(null, loop.failure(), "the loop did not fail");
        assertEquals(1, connection.failed.getCount(), "no handler was told of a failure: " + connection.reason.get());
    }

    /**
     * An {@code Error} on the loop thread (a thread that could not be made for a connection, say) marks the
     * loop failed and tells its handlers: the thread died with no failure named, and the client kept handing
     * out the dead loop, so every later connect fell back until a detach (found in review, 2026-11-28).
     */
    @Test
    void anErrorOnTheLoopThreadFailsTheLoop() throws Exception {
        CmLoop.EventSource source = new CmLoop.EventSource() {
            @Override
            public RdmaCmEvent next(int timeoutMillis) {
                throw new OutOfMemoryError("test: unable to create native thread");
            }

            @Override
            public void close() {
            }
        };
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> { }); // the rethrown Error, expected
        try {
            CmLoop loop = new CmLoop("test-cm", Tracer.OFF, null, 50, null, source);
            RecordingHandler connection = new RecordingHandler();
            loop.register(new Object(), connection);
            assertTrue(loop.awaitEnd(TimeUnit.SECONDS.toMillis(BOUND_SECONDS)), "the loop ended");
            assertTrue(loop.failure() != null && loop.failure().contains("unable to create native thread"), "failure: " + loop.failure());
            assertTrue(connection.failed.await(BOUND_SECONDS, TimeUnit.SECONDS), "the registered handler was told");
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
    }

    /** Records the loop's failure. */
    private static final class RecordingHandler implements CmLoop.Handler {
        final AtomicReference<String> reason = new AtomicReference<>();
        final CountDownLatch failed = new CountDownLatch(1);

        @Override
        public void onCmEvent(RdmaCmEvent.EventType type, RdmaCmEvent event) {
        }

        @Override
        public void onLoopFailed(String why) {
            reason.set(why);
            failed.countDown();
        }
    }

    /** sora's loops: an empty return long before the 500 ms wait is over is an error. */
    @Test
    void persistentErrorEndsALoopWithABoundedWaitAndTellsEveryHandler() throws Exception {
        persistentErrorEndsTheLoopAndTellsEveryHandler(RdmaClient.LOOP_WAIT_MILLIS);
    }

    /** A loop without a timeout: every empty return is an error. */
    @Test
    void persistentErrorEndsALoopThatWaitsForeverAndTellsEveryHandler() throws Exception {
        persistentErrorEndsTheLoopAndTellsEveryHandler(-1);
    }
}
