package io.sora.agent.status;

import java.lang.ref.WeakReference;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * After a detach, no advice reports {@code Socket.close()} any more, yet a connection on a fast path
 * must still end when the application closes its socket (the peer learns it from the fast path's
 * control channel). This watcher polls the sockets and closes each fast connection once its socket is
 * closed or collected. One daemon thread, which ends when nothing is left to watch.
 *
 * @param <C> the fast connection type
 */
public final class DetachedConnections<C> {
    private final List<WeakReference<Socket>> sockets = new ArrayList<>();
    private final List<C> connections = new ArrayList<>();

    /** Adds one socket and its fast connection; before {@link #start} only. */
    public void add(Socket socket, C connection) {
        sockets.add(new WeakReference<>(socket));
        connections.add(connection);
    }

    /** How many connections were added (before {@link #start}). */
    public int size() {
        return connections.size();
    }

    /**
     * Starts watching: {@code close} runs once per connection when its socket is closed or gone;
     * {@code whenDone} runs once after the last (at once when there is none).
     */
    public void start(Consumer<C> close, Runnable whenDone) {
        if (connections.isEmpty()) {
            whenDone.run();
            return;
        }
        Thread t = new Thread(() -> watch(close, whenDone), "sora-detached-connections");
        t.setDaemon(true);
        t.start();
    }

    private void watch(Consumer<C> close, Runnable whenDone) {
        try {
            while (!connections.isEmpty()) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = connections.size() - 1; i >= 0; i--) {
                    Socket s = sockets.get(i).get();
                    if (s == null || s.isClosed()) {
                        close.accept(connections.remove(i));
                        sockets.remove(i);
                    }
                }
            }
        } finally {
            whenDone.run();
        }
    }
}
