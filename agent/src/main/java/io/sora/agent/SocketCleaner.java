package io.sora.agent;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Closes a paired socket's fast path when the application drops the socket without closing it, as
 * {@link java.lang.ref.Cleaner} would, but owned by one agent and ended by its detach: a
 * {@code Cleaner}'s thread cannot be stopped (it ends only once the cleaner itself is unreachable), and
 * a live thread started by the agent's code keeps the agent's class loader reachable (on JDK 17 its
 * inherited access-control context holds the agent's protection domains), so a static {@code Cleaner}
 * kept every detached agent in memory with its thread. One daemon thread ({@code sora-cleaner}),
 * started at the first registration, ended by {@link #close()}.
 *
 * <p>Thread-safe.
 */
final class SocketCleaner {
    /** A registration: {@link #clean()} runs the action at most once, explicitly or when the socket is collected. */
    final class Cleanable extends PhantomReference<Socket> {
        private final Runnable action;

        private Cleanable(Socket socket, Runnable action) {
            super(socket, queue);
            this.action = action;
        }

        /** Runs the action if it has not run yet, and forgets the socket. */
        void clean() {
            if (registered.remove(this)) {
                clear();
                action.run();
            }
        }
    }

    private final ReferenceQueue<Socket> queue = new ReferenceQueue<>();
    /** Keeps the registrations reachable until they run (a phantom reference must be, to be enqueued). */
    private final Set<Cleanable> registered = ConcurrentHashMap.newKeySet();
    private Thread thread; // guarded by this
    private boolean closed; // guarded by this

    /**
     * Runs {@code action} (which must not hold {@code socket}) once {@code socket} became unreachable,
     * unless {@link Cleanable#clean()} ran it first. After {@link #close()} only the explicit clean runs it.
     */
    Cleanable register(Socket socket, Runnable action) {
        Cleanable c = new Cleanable(socket, action);
        registered.add(c);
        synchronized (this) {
            if (!closed && thread == null) {
                thread = io.sora.transport.AgentThreads.daemon(this::run, "sora-cleaner");
                thread.start();
            }
        }
        return c;
    }

    private void run() {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
            }
            try {
                if (queue.remove() instanceof Cleanable c) {
                    try {
                        c.clean();
                    } catch (RuntimeException e) {
                        // closing is best effort, as in close(FastConnection)
                    }
                }
            } catch (InterruptedException e) {
                // close() interrupts: the loop looks at closed
            }
        }
    }

    /**
     * Detach: ends the thread, waiting briefly for it, then runs the registrations whose socket was
     * collected already (queued for the thread, or not even queued yet): the detached connections' watcher
     * only gets the sockets still alive, so nothing else would close those fast paths (found in review,
     * 2026-11-29). The others are not run: the watcher takes them over; an explicit
     * {@link Cleanable#clean()} still runs.
     */
    void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
            thread = null;
        }
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
            try {
                t.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Cleanable c : registered) {
            if (c.refersTo(null)) {
                try {
                    c.clean();
                } catch (RuntimeException e) {
                    // closing is best effort, as in run()
                }
            }
        }
    }
}
