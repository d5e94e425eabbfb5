package io.sora.transport;

import java.util.concurrent.Executor;

/**
 * A daemon thread per task, for tests' asynchronous steps: {@code CompletableFuture}'s default pool has
 * one thread on a 2-CPU machine from JDK 25 on, so a step that blocks (a read waiting on a failed test's
 * ring) starved every later test of the same JVM.
 */
final class TestThreads {
    static final Executor OWN = r -> {
        Thread t = new Thread(r, "test-task");
        t.setDaemon(true);
        t.start();
    };

    private TestThreads() {
    }
}
