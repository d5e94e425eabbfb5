package io.sora.transport;

/**
 * Threads sora starts that outlive the call that starts them. Such a thread is often started on an
 * application thread (its first connect, accept or bind), and a plain {@code new Thread} would keep that
 * thread's context class loader and copies of its inheritable thread-locals for the JVM's life: in a
 * servlet container, a web application's loader (its undeploy then leaks it, and the container warns of
 * the thread). These take the agent's own loader as their context loader and inherit no thread-locals
 * (found in review, 2026-11-29).
 */
public final class AgentThreads {
    private AgentThreads() {
    }

    /** A daemon thread (not started) running {@code task}, named {@code name}, as the class comment says. */
    public static Thread daemon(Runnable task, String name) {
        Thread t = new Thread(null, task, name, 0, false);
        t.setDaemon(true);
        t.setContextClassLoader(AgentThreads.class.getClassLoader());
        return t;
    }
}
