package io.sora.agent.launcher;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lets the agent start on a thread of its own ({@code sora-start}) while the application's {@code main}
 * runs, without a connection ever escaping the patch: until the start is done, a thread that loads
 * {@code java.net.Socket}, {@code java.net.ServerSocket} or the JDK's default selector provider (through
 * which every socket channel and server socket channel is made) waits here, inside the class load, for it
 * ({@link #isGated}).
 *
 * <p>Why that is enough: the socket patch is a retransformation-capable transformer, and the JVM hands
 * a loading class to every retransformation-incapable transformer (this gate) before any capable one
 * (JVMTI, ClassFileLoadHook). So a class held here is patched by the transformer the start registered
 * meanwhile, in the same load. A capable no-op transformer is registered up front so that the JVM's
 * capable environment exists before any such load begins. A class already loaded when the agent starts
 * (another agent used sockets first) cannot be held: then the start runs before {@code main}, as always.
 * The channel classes themselves are patched when they load after the start, or retransformed at its end
 * when something loaded them meanwhile: no channel is made before the provider is, and the provider's load
 * is held.
 *
 * <p>The starting thread itself never waits (it would wait for itself), and it loads none of the gated
 * classes (checked with {@code -Xlog:class+load}; the RDMA self-test makes its TCP connection natively for
 * that reason). A held class must be one the start can never need: while a thread holds a class's load,
 * every other thread that needs the class waits for it. The channel classes are not held for that reason:
 * on JDK 22+ every file stream of the JDK ({@code Files.newInputStream}, {@code readAllBytes}, the JDK's
 * own security properties that {@code SecureRandom} and {@code InetAddress} read at their first use) tests
 * its channel with {@code instanceof SocketChannelImpl}, which loads that class; the start does such reads
 * (its rules, a temporary file), and until 2026-11-29 a {@code main} whose first act was opening a socket
 * channel held that load until the start was done while the start waited for the load (10 s, then the
 * warning, and main's channels on TCP). The wait is bounded ({@link #WAIT_MILLIS}, then one warning, and no
 * later load waits): a start that hangs costs the application that much once, never its sockets' bytes:
 * they stay on TCP.
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
    /** Set when a wait ran out: the start hangs, and no later load waits for it. */
    private volatile boolean gaveUp;

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
     * The classes whose first use may decide a connection's path: streams' sockets, and the default
     * selector provider, which makes every socket channel and server socket channel (connect, bind,
     * accept). The selector, channel and file-channel classes are not held: the agent's start may need
     * them (see the class comment; it loads {@code FileChannelImpl} and, on JDK 22+, {@code
     * SocketChannelImpl}), and no channel exists before the provider does; they are patched as they load
     * after the start, or retransformed when the channel patch installs.
     */
    static boolean isGated(String internalName) {
        return switch (internalName) {
            case "java/net/Socket", "java/net/ServerSocket", "sun/nio/ch/DefaultSelectorProvider" -> true;
            default -> false;
        };
    }

    /** {@link #isGated}, for a binary (dotted) name. */
    static boolean isGatedDotted(String name) {
        return switch (name) {
            case "java.net.Socket", "java.net.ServerSocket", "sun.nio.ch.DefaultSelectorProvider" -> true;
            default -> false;
        };
    }

    private void open() {
        started.countDown();
        inst.removeTransformer(this);
        inst.removeTransformer(capable);
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefining,
                            ProtectionDomain pd, byte[] bytes) {
        if (loader != null || redefining != null || started.getCount() == 0 || gaveUp || !isGated(name)
                || Thread.currentThread() == starter) {
            return null;
        }
        try {
            if (!started.await(WAIT_MILLIS, TimeUnit.MILLISECONDS) && !gaveUp) {
                // once: a start that hangs costs the application one wait, not one per gated class
                gaveUp = true;
                System.err.println("[sora] WARN the agent did not start within " + WAIT_MILLIS + " ms; "
                        + name.replace('/', '.') + " loads unpatched, and connections made before the agent is up"
                        + " stay on TCP (no later load waits; on a slow host: -D" + WAIT_PROPERTY + "=MS waits longer)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }
}
