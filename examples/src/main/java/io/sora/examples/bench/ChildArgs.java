package io.sora.examples.bench;

import java.lang.reflect.InvocationTargetException;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What every benchmark child process shares: {@code key=value} arguments, a watchdog that bounds the
 * child's life, and the check that a socket really is on the path the driver asked for.
 * Used from the child's main thread only (the watchdog is its own daemon thread).
 */
final class ChildArgs {
    /** Exit code of a child that detected a wrong path, bad data or a timeout. */
    static final int FAILED = 3;

    private final String program;
    private final Map<String, String> values = new LinkedHashMap<>();

    private ChildArgs(String program) {
        this.program = program;
    }

    /** Parses {@code key=value} words; anything else is an {@link IllegalArgumentException} naming it. */
    static ChildArgs parse(String program, String[] args) {
        ChildArgs a = new ChildArgs(program);
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(program + ": argument '" + arg + "' is not key=value");
            }
            a.values.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return a;
    }

    boolean has(String key) {
        return values.containsKey(key);
    }

    String get(String key) {
        String v = values.get(key);
        if (v == null) {
            throw new IllegalArgumentException(program + ": missing argument " + key + "=... (got " + values + ")");
        }
        return v;
    }

    long getLong(String key) {
        String v = get(key);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(program + ": " + key + "=" + v + " is not a whole number", e);
        }
    }

    int getInt(String key) {
        long v = getLong(key);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(program + ": " + key + "=" + v + " must be between 0 and " + Integer.MAX_VALUE);
        }
        return (int) v;
    }

    /** A comma-separated size list ({@link Sweep#parseSize}); an empty value is an empty list. */
    int[] getSizes(String key) {
        String v = get(key);
        return v.isEmpty() ? new int[0] : Sweep.parseSizes(program + ": " + key, v);
    }

    /**
     * Starts a daemon thread that ends this JVM with {@link #FAILED} when {@code timeout=SECONDS}
     * elapses or the driver process disappears, so no child outlives a killed or hung benchmark.
     */
    void startWatchdog() {
        long deadline = System.nanoTime() + getLong("timeout") * 1_000_000_000L;
        ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("timed out after " + get("timeout") + " s");
                }
                if (parent != null && !parent.isAlive()) {
                    fail("the driver process " + parent.pid() + " is gone");
                }
            }
        }, "bench-watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** Prints the reason on stderr and exits with {@link #FAILED}; used for wrong paths and bad data. */
    void fail(String reason) {
        System.err.println(program + ": FAILED: " + reason);
        System.err.flush();
        System.exit(FAILED);
    }

    /**
     * Checks that {@code socket} carries its bytes on {@code path=...} and that the agent is attached
     * exactly when {@code agent=yes}; fails the child loudly otherwise.
     */
    /** As {@link #checkPath(Socket)}, for a channel (the agent's {@code pathOf(SocketChannel)}). */
    void checkPath(java.nio.channels.SocketChannel channel) {
        checkPath(channel, java.nio.channels.SocketChannel.class, channel.socket());
    }

    void checkPath(Socket socket) {
        checkPath(socket, Socket.class, socket);
    }

    /** The bridge's {@code pathOf(type)}, looked up once per type: the check runs in the timed loops' gaps. */
    private final Map<Class<?>, java.lang.reflect.Method> pathOf = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile Class<?> bridge;
    private volatile boolean bridgeChecked;

    private synchronized void checkBridge(boolean wantAgent) {
        if (bridgeChecked) return;
        Class<?> b;
        try {
            b = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
        } catch (ClassNotFoundException e) {
            b = null;
        }
        if (wantAgent != (b != null)) {
            fail("agent=" + get("agent") + " but the sora bootstrap bridge is " + (b == null ? "absent" : "present"));
        }
        try {
            if (b != null && b.getMethod("delegate").invoke(null) == null) {
                fail("the sora agent is attached but installed no delegate (its start-up failed; see stderr)");
            }
        } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
            fail("SoraBridge.delegate failed: " + e);
        }
        bridge = b;
        bridgeChecked = true;
    }

    private void checkPath(Object connection, Class<?> type, Socket socket) {
        boolean wantAgent = "yes".equals(get("agent"));
        String want = get("path");
        if (!bridgeChecked) checkBridge(wantAgent);
        Class<?> b = bridge;
        String actual = "tcp";
        if (b != null) {
            try {
                java.lang.reflect.Method m = pathOf.get(type);
                if (m == null) {
                    m = b.getMethod("pathOf", type);
                    pathOf.put(type, m);
                }
                actual = String.valueOf(m.invoke(null, connection));
            } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
                fail("SoraBridge.pathOf failed: " + e);
            }
        }
        if (!want.equals(actual)) {
            fail("socket " + socket.getLocalSocketAddress() + " -> " + socket.getRemoteSocketAddress()
                    + " is on path '" + actual + "', expected '" + want + "'");
        }
    }
}
