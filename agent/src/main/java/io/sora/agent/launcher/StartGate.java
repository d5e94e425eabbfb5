package io.sora.agent.launcher;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lets the agent start on a thread of its own ({@code sora-start}) while the application's {@code main}
 * runs, without a connection ever escaping the patch: until the start is done, a thread that loads
 * {@code java.net.Socket}, {@code java.net.ServerSocket} or the JDK's socket channel classes waits here,
 * inside the class load, for it ({@link #isGated}).
 *
 * <p>Why that is enough: the socket patch is a retransformation-capable transformer, and the JVM hands
 * a loading class to every retransformation-incapable transformer (this gate) before any capable one
 * (JVMTI, ClassFileLoadHook). So a class held here is patched by the transformer the start registered
 * meanwhile, in the same load. A capable no-op transformer is registered up front so that the JVM's
 * capable environment exists before any such load begins. A class already loaded when the agent starts
 * (another agent used sockets first) cannot be held: then the start runs before {@code main}, as always.
 *
 * <p>The starting thread itself never waits (it would wait for itself); it does not load
 * {@code Socket} or {@code ServerSocket} (checked with {@code -Xlog:class+load}; the RDMA self-test makes its
 * TCP connection natively for that reason), and on JDK 22+ its file reads load {@code SocketChannelImpl},
 * which is why such loads are never held ({@link #loadedByAType}). The wait is bounded ({@link #WAIT_MILLIS}, then a warning): a start that hangs
 * costs the application that much once, never its sockets' bytes: they stay on TCP.
 */
final class StartGate implements ClassFileTransformer {
    static final String WAIT_PROPERTY = "sora.startup.gateWait";
    /**
     * How long a gated class load waits for the start, in ms: {@code -Dsora.startup.gateWait=MS}, 10,000
     * by default (the agent starts in 0.1-0.3 s on an ordinary machine; an emulated one took more than
     * 10 s), 0: never wait (the application's first sockets may then load unpatched and stay on TCP).
     */
    static final long WAIT_MILLIS = Math.max(0, Long.getLong(WAIT_PROPERTY, 10_000));

    private final Instrumentation inst;
    private final CountDownLatch started = new CountDownLatch(1);
    /** Makes the JVM's retransformation-capable environment exist now (see the class comment). */
    private final ClassFileTransformer capable = new ClassFileTransformer() {
    };
    private volatile Thread starter;

    private StartGate(Instrumentation inst) {
        this.inst = inst;
    }

    /**
     * Runs {@code start} on a daemon thread behind the gate; false (nothing started) when a gated class
     * is loaded already, so the caller starts the agent itself.
     */
    static boolean begin(Instrumentation inst, Runnable start) {
        for (Class<?> c : inst.getAllLoadedClasses()) {
            // names compared dotted: no String.replace for each of the JVM's classes at its start
            if (isGatedDotted(c.getName()) && c.getClassLoader() == null) return false;
        }
        StartGate gate = new StartGate(inst);
        inst.addTransformer(gate, false);
        inst.addTransformer(gate.capable, true);
        Thread t = new Thread(() -> {
            try {
                start.run();
            } finally {
                gate.open();
            }
        }, "sora-start");
        t.setDaemon(true); // a short program may end before the agent is up: nothing was waiting for it then
        gate.starter = t;
        t.start();
        return true;
    }

    /**
     * The classes whose first use may decide a connection's path: streams' sockets and NIO's channels
     * (connect, bind, accept). The selector and file-channel classes are not held: the agent's own
     * start loads {@code FileChannelImpl} (so holding it could deadlock the start against a loading
     * application thread), and both only matter for connections paired after the start; they are
     * retransformed when the channel patch installs.
     */
    static boolean isGated(String internalName) {
        return switch (internalName) {
            case "java/net/Socket", "java/net/ServerSocket", "sun/nio/ch/SocketChannelImpl",
                    "sun/nio/ch/ServerSocketChannelImpl" -> true;
            default -> false;
        };
    }

    /** {@link #isGated}, for a binary (dotted) name. */
    static boolean isGatedDotted(String name) {
        return switch (name) {
            case "java.net.Socket", "java.net.ServerSocket", "sun.nio.ch.SocketChannelImpl",
                    "sun.nio.ch.ServerSocketChannelImpl" -> true;
            default -> false;
        };
    }

    /**
     * Whether a channel class is being loaded because the JDK's own code tests a type against it, not to
     * make a channel: on JDK 22+ every file stream ({@code Files.newInputStream}, {@code readAllBytes}: an
     * {@code instanceof SocketChannelImpl} in {@code sun.nio.ch.Streams}) and {@code FileChannel.transferTo}
     * (a type switch in {@code FileChannelImpl}) load {@code SocketChannelImpl}. Such a load must not wait:
     * the agent's start reads files too (its rules), and a start that needs the class a held {@code main}
     * is loading waits for that load, which waits for the start (until 2026-11-24 every JVM on JDK 25 whose
     * {@code main} read a file or resolved an address first stopped for the gate's 10 s, and its sockets
     * loaded unpatched). The class then loads unpatched and is patched at the start's end, with the rest
     * of the channel patch; a client channel that {@code main} opens meanwhile (the start's first 0.1-0.3
     * s) stays on TCP, while server channels, streams and sockets are still held.
     */
    private static boolean loadedByAType(String name) {
        if (!name.startsWith("sun/nio/ch/")) return false;
        return StackWalker.getInstance().walk(frames -> frames.limit(64).anyMatch(f -> {
            String c = f.getClassName();
            return c.equals("sun.nio.ch.Streams") || c.equals("sun.nio.ch.FileChannelImpl");
        }));
    }

    private void open() {
        started.countDown();
        inst.removeTransformer(this);
        inst.removeTransformer(capable);
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefining,
                            ProtectionDomain pd, byte[] bytes) {
        if (loader != null || redefining != null || started.getCount() == 0 || !isGated(name)
                || Thread.currentThread() == starter || loadedByAType(name)) {
            return null;
        }
        try {
            if (!started.await(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                System.err.println("[sora] WARN the agent did not start within " + WAIT_MILLIS + " ms; "
                        + name.replace('/', '.') + " loads unpatched, its connections stay on TCP until it has"
                        + " (on a slow host: -D" + WAIT_PROPERTY + "=MS waits longer)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }
}
