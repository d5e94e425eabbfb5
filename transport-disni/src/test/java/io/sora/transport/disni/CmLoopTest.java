package io.sora.transport.disni;

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
 * {@code getCmEvent} turns that into null, as for a timeout. A loop that waits forever (the client's)
 * then spins hot on a persistent error. The fake source returns null at once, as the real one does
 * then; the loop must end after a bounded number of tries and fail every pending pairing with a reason.
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

    private static void persistentErrorEndsTheLoop(int timeoutMillis) throws Exception {
        FailingSource source = new FailingSource();
        CmLoop loop = new CmLoop("test-cm", Tracer.OFF, null, timeoutMillis, null, source);
        AtomicReference<String> reason = new AtomicReference<>();
        CountDownLatch failed = new CountDownLatch(1);
        loop.register(new Object(), new CmLoop.Handler() {
            @Override
            public void onCmEvent(RdmaCmEvent.EventType type, RdmaCmEvent event) {
            }

            @Override
            public void onLoopFailed(String why) {
                reason.set(why);
                failed.countDown();
            }
        });
        boolean ended = loop.awaitEnd(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        assertTrue(ended, "the loop ended (source called " + source.calls.get() + " times)");
        assertTrue(source.calls.get() <= MAX_CALLS, "bounded tries, not a hot spin: " + source.calls.get());
        assertTrue(failed.await(BOUND_SECONDS, TimeUnit.SECONDS), "the pending pairing was failed");
        assertTrue(reason.get().contains("CM event"), reason.get());
        assertTrue(source.closed.getCount() == 0, "the event channel was released");
    }

    @Test
    void persistentErrorEndsTheClientLoopThatWaitsForever() throws Exception {
        persistentErrorEndsTheLoop(-1);
    }

    @Test
    void persistentErrorEndsAListenerLoopWithABoundedWait() throws Exception {
        persistentErrorEndsTheLoop(500);
    }
}
